-- The runs list reads its page's ~50 runs whole (stores/runs/run-list.ts), and the first runs of a sort by cost,
-- duration or tokens are spread over ~40 of agent_runs' granules of 8,192 rows: decompressing those granules' input
-- and output previews and metadata was most of that read. LZ4 decompresses them faster than ZSTD(1): the page's read
-- of the 51 runs by cost went from p50 332 to 219 ms on a million runs (docs/BENCHMARKS.md, "The runs explorer"), for
-- about twice the compressed size of these columns (a preview ~19 → ~33 MiB a million runs).
-- The codec alone changes: no part is rewritten now; parts written or merged from now on use LZ4.
ALTER TABLE agent_runs MODIFY COLUMN input_preview String DEFAULT '' CODEC(LZ4);
ALTER TABLE agent_runs MODIFY COLUMN output_preview String DEFAULT '' CODEC(LZ4);
ALTER TABLE agent_runs MODIFY COLUMN metadata Map(String, String) DEFAULT map() CODEC(LZ4);
