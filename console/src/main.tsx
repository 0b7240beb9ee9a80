// First: the chart library reads navigator.language as it loads (see locale.ts).
import "./locale.js";
import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./styles/base.css";
import "./styles/forms.css";
import "./styles/data.css";
import "./styles/widgets.css";
import "./styles/phone.css";
import { App } from "./app.js";

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
