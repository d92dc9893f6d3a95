"""One shared Hermes for a team, a profile per user pinned by the spawner (``HERMES_PROFILE`` and
``HERMES_PROFILE_LOCK``), with real kernels (jupyter_client + ipykernel) against the real newer Hermes.

The newer Hermes serves ``default``, ``alice`` and ``bob`` (a home each under ``<home>/profiles/``; one
Dashboard serves them all, as a team's shared Hermes would). alice's kernel shares itself in her profile;
bob's turn that names her tool server is refused (Hermes offers a profile's MCP servers to that profile's
sessions only, and alice's kernel answers only her own turns) and never shows her data; with the lock, bob's
kernel cannot connect to alice's profile at all.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import profiles_hermes
from tests.kernels import Kernel

pytestmark = pytest.mark.servers("newer")
USERS = ("alice", "bob")


@pytest.fixture(scope="module")
def shared(hermes_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHermes]:
    """A newer Hermes serving a profile per user (same scripted model), started once for the module."""
    with profiles_hermes(hermes_bin, tmp_path_factory.mktemp("hermes-team"), *USERS) as local:
        yield local


def test_bobs_turn_never_reaches_alices_tools_and_the_lock_keeps_bob_in_his_profile(
    shared: LocalHermes, tmp_path: Path
) -> None:
    """alice shares her kernel in her profile and her own turn reads her variable; bob's turn naming her tool
    server is refused and never shows her data (her kernel answered no call); bob's kernel, pinned to his
    profile with the lock, cannot connect to alice's (a clear error naming the pinned profile), while
    ``connect()`` keeps him in his own; ``share_kernel()`` says whose sessions see the tools."""
    pinned = {user: {"HERMES_PROFILE": user, "HERMES_PROFILE_LOCK": "1"} for user in USERS}
    alice, bob = (Kernel(shared, tmp_path, **pinned[user]) for user in USERS)
    try:
        secret = f"ALICE-ONLY-{uuid.uuid4().hex[:8]}"
        out = alice.run(
            f"alice_plans = {secret!r}\n"
            "import hermes_notebook as hn\n"
            "h = hn.connect()\n"
            "share = h.share_kernel(read=True)\n"
            "print('NAME', share.name, 'PROFILE', h.settings.profile)\n"
            "print(share)\n"
        )
        match = re.search(r"NAME (notebook_[0-9a-f]{8}) PROFILE alice", out)
        assert match, out
        name = match.group(1)
        assert "every session of profile 'alice' sees the tools" in out, out
        own = alice.run("print(h.ask('KERNEL list_variables', new=True).text)")
        assert "alice_plans" in own, own  # the tools work in her profile

        refused = bob.run(
            "import hermes_notebook as hn\n"
            "from hermes_notebook.errors import HermesUsageError\n"
            "h = hn.connect()\n"
            "print('PROFILE', h.settings.profile)\n"
            f"print(h.ask('KERNEL@{name} describe alice_plans', new=True).text)\n"
            "try:\n"
            "    hn.connect(profile='alice')\n"
            "except HermesUsageError as exc:\n"
            "    print('REFUSED', exc)\n"
        )
        assert "PROFILE bob" in refused, refused
        assert "no notebook tool 'describe' was offered" in refused, refused  # not in bob's profile
        assert secret not in refused and "alice_plans' =" not in refused
        assert (
            "REFUSED this kernel is pinned to the Hermes profile 'bob' (HERMES_PROFILE with "
            "HERMES_PROFILE_LOCK, set by whoever started it): profile 'alice' is refused" in refused
        ), refused
        calls = alice.run(
            "from hermes_notebook.kernel.share import KERNEL\nprint('CALLS', len(KERNEL.recent_calls()))"
        )
        assert "CALLS 1" in calls, calls  # alice's own list_variables only: bob's turn reached nothing
    finally:
        alice.stop()
        bob.stop()


def test_one_kernel_shared_in_two_profiles_is_registered_in_each(shared: LocalHermes) -> None:
    """This process's kernel shared from two profiles of one Dashboard is registered in both (the record is
    kept per Dashboard and profile: the second profile was never registered before), and closing one
    connection unregisters it there only."""
    import hermes_notebook as hn
    from hermes_notebook.runtime import run_sync

    alice = hn.connect(shared.settings(), profile="alice")
    bob = hn.connect(shared.settings(), profile="bob")
    try:
        name = alice.share_kernel(read=True).name
        assert bob.share_kernel(read=True).name == name
        for h in (alice, bob):
            assert name in run_sync(h.conversation.mcp.listed(), timeout=30), h.settings.profile
        bob.close()
        assert name in run_sync(alice.conversation.mcp.listed(), timeout=30)
        again = hn.connect(shared.settings(), profile="bob")
        try:
            assert name not in run_sync(again.conversation.mcp.listed(), timeout=30)
        finally:
            again.close()
    finally:
        bob.close()
        alice.close()
