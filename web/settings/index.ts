/** A user's settings: their preferences and API keys. */
import type { WebFeature } from "../feature.js";
import { registerApiKeySettings } from "./api-keys.js";
import { registerSettingsPage } from "./settings-page.js";

export const settings: WebFeature = {
  name: "settings",
  apis: [registerApiKeySettings],
  pages: [registerSettingsPage],
};
