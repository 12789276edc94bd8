/** Datasets and experiments: their API, pages and the comparison of experiments. */
import type { WebFeature } from "../feature.js";
import { registerDatasetsApi } from "./datasets-api.js";
import { DATASET_OPERATIONS } from "./datasets-openapi.js";
import { registerDatasetsPage } from "./datasets-page.js";
import { registerExperimentsApi } from "./experiments-api.js";
import { EXPERIMENT_OPERATIONS } from "./experiments-openapi.js";
import { registerExperimentsPage } from "./experiments-page.js";

export const datasets: WebFeature = {
  name: "datasets",
  apis: [registerDatasetsApi, registerExperimentsApi],
  pages: [registerDatasetsPage, registerExperimentsPage],
  openapi: { ...DATASET_OPERATIONS, ...EXPERIMENT_OPERATIONS },
};
