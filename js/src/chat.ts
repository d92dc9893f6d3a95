// anywidget entry for hermes_notebook.widgets.Chat (bundled to hermes_notebook/static/chat.js;
// its stylesheet is chat.css, loaded by the Python side as `_css`).

import { createChatView } from "./chat/view";
import type { RenderProps } from "./types/widget";

import type { ChatState } from "./types/chat";

function render({ model, el }: RenderProps<ChatState>): () => void {
  const view = createChatView(model, el);
  return () => view.dispose();
}

export default { render };
