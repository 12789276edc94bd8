/** The human-input API's part of the OpenAPI document (human-input-api.ts). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";
import { q, SdkRunId } from "../api/openapi/operation.js";
import * as R from "../api/openapi/schemas.js";

export const HUMAN_INPUT_OPERATIONS: Operations = {
  "/api/runs/{sdk_run_id}/input": {
    get: {
      tag: "Human input", summary: "The answer to the run's pending question",
      params: [SdkRunId, q("wait", Schema.Int.pipe(Schema.between(0, 30)), "Seconds to hold the request until an answer arrives (long poll).")],
      ok: { 200: R.HumanAnswer, 204: null }, errors: [401, 403, 404, 422, 429],
    },
    post: { tag: "Human input", summary: "Answer the run's pending question", params: [SdkRunId], body: R.HumanAnswerInput, ok: { 201: R.HumanAnswer }, errors: [400, 401, 403, 404, 409, 413, 415, 422, 429] },
  },
};
