// /alerts rule form: shows the config fields of the chosen trigger and the target hint of the chosen channel.
// Without this script every trigger's fieldset is shown and the server still validates everything.
const form = document.getElementById("rule-form");
if (form) {
  const trigger = form.querySelector("#trigger_type");
  const channel = form.querySelector("#channel");
  const target = form.querySelector("#target");
  const help = form.querySelector("#target-help");
  const syncTrigger = () => {
    for (const fs of form.querySelectorAll(".trigger-config")) {
      const on = fs.dataset.trigger === trigger.value;
      fs.hidden = !on;
      fs.disabled = !on; // disabled fieldsets are not submitted
    }
  };
  const syncChannel = () => {
    const opt = channel.selectedOptions[0];
    target.placeholder = opt?.dataset.placeholder ?? "";
    help.textContent = opt?.dataset.help ?? "";
    const none = channel.value === "dashboard";
    target.disabled = none;
    if (none) target.value = "";
  };
  trigger.addEventListener("change", syncTrigger);
  channel.addEventListener("change", syncChannel);
  syncTrigger();
  syncChannel();
}
