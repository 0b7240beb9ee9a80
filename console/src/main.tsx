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
