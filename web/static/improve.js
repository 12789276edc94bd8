// /improve: Switch the model suggestions with the provider; replace the model only if it was the old provider's default.
(function () {
  var provider = document.getElementById("provider"), model = document.getElementById("model");
  if (!provider || !model) return;
  var previous = provider.selectedOptions[0];
  provider.addEventListener("change", function () {
    var opt = provider.selectedOptions[0];
    model.setAttribute("list", "models-" + provider.value);
    if (!model.value || (previous && model.value === previous.dataset.defaultModel)) model.value = opt.dataset.defaultModel || "";
    previous = opt;
  });
  document.getElementById("improve-form").addEventListener("submit", function () {
    var b = document.getElementById("improve-submit");
    b.disabled = true; b.textContent = "Improving…";
  });
})();
