// Placeholder while the screen is written (replaced in the next commits).
import { h } from "../dom.js";

export default {
  title: () => "Home",
  async render(root) {
    root.append(h("p", {}, "Loading…"));
    return {};
  },
};
