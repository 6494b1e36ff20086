"""The fast path of `recall-tui hook session-start | prompt-submit`: a warm service answers.

The code is `recall_tui.agent.hook_wire`, which imports nothing, so that the hook's launcher
(recall_tui/launcher.py, what `hook install` writes) can load it without the package's
`__init__` modules; this module is its name on the command line's side (`recall_tui.cli.main`
tries it first, `recall_tui.cli.hook` takes the stdin read and the service's answer or failure
from it). One module object either way: the launcher registers the file it loads under its
package name, so the state handed over (`take_stdin`, `ask_service`, `started`) is the same.
"""

from recall_tui.agent import client  # noqa: F401  (`hook_fast.client.ServiceUnavailable`)
from recall_tui.agent.hook_wire import (  # noqa: F401  (this module's API)
    BUDGET_MS,
    DEFAULT_SOURCES,
    EMBEDDERS,
    EVENTS,
    HOOK_EVENTS,
    PAYLOAD_KEYS,
    _options,
    ask_service,
    hook_options,
    payload,
    read_stdin,
    started,
    take_stdin,
    try_service,
)
