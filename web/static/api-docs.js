/* /api/docs: Swagger UI over this server's own OpenAPI document (web/api/openapi). */
window.addEventListener("DOMContentLoaded", () => {
  window.SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
