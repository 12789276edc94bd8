/**
 * Datasets from the JS client against a real server (`runwatch start` on free ports): create one, add items as
 * versions (a run's id as their source), read each version back page by page; a bad item rejects naming the field
 * the server names, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError, type DatasetItem } from "../src/index.js";
import { startRealServer, type RealServer } from "./real-server.js";

let server: RealServer;
let client: Runwatch;

beforeAll(async () => {
  server = await startRealServer();
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url });
}, 120_000);
afterAll(async () => {
  await client?.shutdown();
  await server?.stop();
});

const all = async (it: AsyncGenerator<DatasetItem>) => {
  const out: DatasetItem[] = [];
  for await (const item of it) out.push(item);
  return out;
};

describe("datasets", () => {
  it("builds a dataset in versions and reads each back", async () => {
    const name = `js set ${Date.now()}`;
    expect(await client.createDataset(name, "from the JS client")).toMatchObject({ name, version: 0, item_count: 0 });
    await expect(client.createDataset(name)).rejects.toThrow(/already has a dataset named/);

    const first = await client.addDatasetItems(name, Array.from({ length: 1_500 }, (_, i) => ({ id: `q${String(i).padStart(4, "0")}`, input: { question: `#${i}` }, expected_output: i })));
    expect([first.version, first.changed, first.ids.length]).toEqual([1, 1_500, 1_500]);
    const second = await client.addDatasetItems(name, [{ id: "q0001", input: { question: "#1" }, expected_output: "one", source_sdk_run_id: "run-7" }]);
    expect([second.version, second.changed]).toEqual([2, 1]);

    const v1 = await all(client.datasetItems(name, { version: 1 }));
    const now = await all(client.datasetItems(name));
    expect([v1.length, now.length]).toEqual([1_500, 1_500]);
    expect(v1.slice(0, 2).map((i) => i.expected_output)).toEqual([0, 1]);
    expect(now[1]).toMatchObject({ expected_output: "one", source: "run", source_sdk_run_id: "run-7", version: 2 });
    expect((await client.getDataset(name)).versions.map((v) => v.version)).toEqual([2, 1]);

    const refused = await client.addDatasetItems(name, [{ input: 1 }, { expected_output: 2 } as never]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunwatchError);
    expect((refused as RunwatchError).message).toContain("items[1].input");
    await expect(client.addDatasetItems(`${name} missing`, [{ input: 1 }])).rejects.toThrow(/HTTP 404/);
    expect((await client.getDataset(name)).dataset.version).toBe(2);
  }, 60_000);
});
