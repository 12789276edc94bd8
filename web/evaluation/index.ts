/** Evaluation (the feature is evaluation/): evaluators, rules, provider keys and annotation queues, API and pages. */
import type { WebFeature } from "../feature.js";
import { registerAnnotationQueuesApi } from "./annotation-queues-api.js";
import { registerAnnotationQueuesPage } from "./annotation-queues-page.js";
import { registerAnnotationReviewPage } from "./annotation-review-page.js";
import { EVALUATION_OPERATIONS } from "./evaluation-openapi.js";
import { registerEvaluatorsApi } from "./evaluators-api.js";
import { registerEvaluatorsPage } from "./evaluators-page.js";
import { registerProviderKeysApi } from "./provider-keys-api.js";
import { registerEvaluationRulesApi } from "./rules-api.js";

export const evaluation: WebFeature = {
  name: "evaluation",
  apis: [registerEvaluatorsApi, registerProviderKeysApi, registerEvaluationRulesApi, registerAnnotationQueuesApi],
  pages: [registerEvaluatorsPage, registerAnnotationQueuesPage, registerAnnotationReviewPage],
  openapi: EVALUATION_OPERATIONS,
};
