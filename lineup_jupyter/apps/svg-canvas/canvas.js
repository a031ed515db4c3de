// A drawing surface: strokes from the state (the agent's) plus the user's own. A finished
// stroke is sent as `draw`; the canvas's size as `resize`; the button sends `snapshot`.
const NS = "http://www.w3.org/2000/svg";
const MAX_POINTS = 400; // keeps a draw event well under the 16 KiB event limit (U9)
const svg = document.getElementById("canvas");
let color = "#1f6feb";
let own = []; // strokes drawn here since the last state
let fromState = [];
let current = null;

function line(stroke) {
  const path = document.createElementNS(NS, "polyline");
  path.setAttribute("points", stroke.points.map((p) => p.join(",")).join(" "));
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", stroke.color);
  path.setAttribute("stroke-width", String(stroke.width));
  path.setAttribute("stroke-linecap", "round");
  path.setAttribute("stroke-linejoin", "round");
  return path;
}

function render() {
  svg.replaceChildren(...fromState.concat(own).map(line));
}

function point(event) {
  const box = svg.getBoundingClientRect();
  return [Math.round(event.clientX - box.left), Math.round(event.clientY - box.top)];
}

svg.addEventListener("pointerdown", (event) => {
  svg.setPointerCapture(event.pointerId);
  current = { points: [point(event)], color, width: 3 };
  own.push(current);
  render();
});
svg.addEventListener("pointermove", (event) => {
  if (!current || current.points.length >= MAX_POINTS) return;
  current.points.push(point(event));
  render();
});
function finish() {
  if (!current) return;
  LineUpSurface.event("draw", current);
  current = null;
}
svg.addEventListener("pointerup", finish);
svg.addEventListener("pointercancel", finish);

for (const button of document.querySelectorAll(".color")) {
  button.addEventListener("click", () => {
    color = button.dataset.color;
    for (const other of document.querySelectorAll(".color")) {
      other.setAttribute("aria-pressed", String(other === button));
    }
  });
}
document.getElementById("clear").addEventListener("click", () => {
  own = [];
  render();
});
document.getElementById("snapshot").addEventListener("click", () => {
  const text = new XMLSerializer().serializeToString(svg);
  const data = { strokes: fromState.length + own.length };
  if (text.length < 12000) data.svg = text; // a large drawing is counted, not sent
  LineUpSurface.event("snapshot", data);
});

let sent = "";
new ResizeObserver(() => {
  const box = svg.getBoundingClientRect();
  const size = { width: Math.round(box.width), height: Math.round(box.height) };
  const key = `${size.width}x${size.height}`;
  if (key !== sent && size.width > 0) {
    sent = key;
    LineUpSurface.event("resize", size);
  }
}).observe(svg);

LineUpSurface.onState((state) => {
  fromState = Array.isArray(state.strokes) ? state.strokes : [];
  render();
});
