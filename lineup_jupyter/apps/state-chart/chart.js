// A bar chart of state.series; the state is the agent's data, drawn with DOM APIs only
// (labels go in as text, never as markup).
const NS = "http://www.w3.org/2000/svg";
const svg = document.getElementById("chart");
const WIDTH = 600, HEIGHT = 260, AXIS = 24, TOP = 16;

function el(name, attributes, text) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

LineUpSurface.onState((state) => {
  document.getElementById("title").textContent = String(state.title ?? "");
  const series = (Array.isArray(state.series) ? state.series : [])
    .filter((d) => d && typeof d.value === "number" && Number.isFinite(d.value))
    .slice(0, 60);
  const max = Math.max(1e-9, ...series.map((d) => d.value));
  const step = series.length ? WIDTH / series.length : WIDTH;
  const unit = typeof state.unit === "string" ? ` ${state.unit}` : "";
  svg.setAttribute("aria-label", `${state.title ?? "chart"}: ${series.length} bars`);
  svg.replaceChildren(
    ...series.flatMap((d, i) => {
      const height = Math.max(0, (d.value / max) * (HEIGHT - AXIS - TOP));
      const x = i * step + step * 0.15;
      const label = String(d.label ?? "");
      const bar = el("rect", {
        class: "bar", x, y: HEIGHT - AXIS - height, width: step * 0.7, height,
        tabindex: 0, role: "button", "aria-label": `${label}: ${d.value}${unit}`,
      });
      const select = () => LineUpSurface.event("select", { label: label.slice(0, 200), value: d.value });
      bar.addEventListener("click", select);
      bar.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") select();
      });
      return [
        bar,
        el("text", { x: x + step * 0.35, y: HEIGHT - 6, "text-anchor": "middle" }, label),
        el("text", { x: x + step * 0.35, y: HEIGHT - AXIS - height - 4, "text-anchor": "middle" },
          `${d.value}${unit}`),
      ];
    }),
  );
});
