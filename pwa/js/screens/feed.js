// The global feed: every visible project's events, newest first, with kind chips and paging.
import { h } from "../dom.js";
import { errorBox, projectNames } from "./parts/common.js";
import { createFeed } from "./parts/feedlist.js";

export default {
  title: () => "Feed",
  async render(root, params, app) {
    let names;
    try {
      names = await projectNames(app);
    } catch (err) {
      root.append(errorBox(err));
      return {};
    }
    const feed = createFeed(app, { path: "/feed", names });
    root.append(h("p", { class: "screen-links" }, h("a", { href: "#/projects" }, "Projects")), feed.node);
    await feed.load();
    return feed;
  },
};
