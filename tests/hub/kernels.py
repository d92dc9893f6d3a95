"""A notebook kernel reached only through the hub: started with the user's server's REST API and run over its
kernel WebSocket (``/user/<name>/api/kernels/<id>/channels``), as JupyterLab does, with the user's token."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from typing import Any

from websockets.sync.client import ClientConnection, connect

from .hub import Hub


class HubKernel:
    """One kernel of ``user``'s server: :meth:`run` executes code and returns what it printed."""

    def __init__(self, hub: Hub, user: str) -> None:
        self.hub, self.user, self.token = hub, user, hub.token_of(user)
        response = hub.user_request(user, "POST", "/api/kernels", token=self.token, json={"name": "python3"})
        assert response.status_code == 201, response.text
        self.id = response.json()["id"]
        ws_url = hub.url.replace("http://", "ws://") + f"/user/{user}/api/kernels/{self.id}/channels"
        # Entered by hand (closed in close()): websockets 17 wants connect() used as a context manager.
        self._ws: ClientConnection = connect(
            ws_url, additional_headers={"Authorization": f"token {self.token}"}, max_size=None
        ).__enter__()
        self._session = uuid.uuid4().hex

    def run(self, code: str, timeout: float = 120.0) -> str:
        """Execute ``code``; its stdout and stderr (a traceback as text), once the kernel is idle again."""
        msg_id = uuid.uuid4().hex
        self._ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "msg_type": "execute_request",
                        "username": self.user,
                        "session": self._session,
                        "date": "",
                        "version": "5.3",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "content": {"code": code, "silent": False, "store_history": True, "allow_stdin": False},
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the kernel did not finish within {timeout} s; so far: {''.join(out)}")
            message: dict[str, Any] = json.loads(self._ws.recv(timeout=remaining))
            if message.get("parent_header", {}).get("msg_id") != msg_id or message.get("channel") != "iopub":
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                out.append(f"{content['ename']}: {content['evalue']}\n")
            elif kind == "status" and content.get("execution_state") == "idle":
                return "".join(out)

    def close(self) -> None:
        """Close the socket and shut the kernel down through the server's API."""
        with contextlib.suppress(Exception):
            self._ws.close()
        with contextlib.suppress(Exception):
            self.hub.user_request(self.user, "DELETE", f"/api/kernels/{self.id}", token=self.token)
