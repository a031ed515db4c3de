// Shows the state; Refresh asks the agent (the surface has no network of its own, S3).
const unit = document.getElementById("unit");
LineUpSurface.onState((state) => {
  document.getElementById("city").textContent = String(state.city ?? "");
  const value = state.temperature;
  document.getElementById("temperature").textContent =
    typeof value === "number" ? `${value}°${(state.unit ?? "c").toUpperCase()}` : "";
  if (state.unit === "c" || state.unit === "f") unit.value = state.unit;
});
document.getElementById("refresh").addEventListener("click", () => {
  LineUpSurface.event("refresh", { unit: unit.value });
});
