"""What verify runs on an RGOS switch and how the CLI refuses a command (constants and one small
reader; the show outputs themselves are read by observations.py, which loads TextFSM)."""

from __future__ import annotations

# what verify runs on every switch, each read by observe() (`show version`, which push's get_facts
# reads, is not among them: nothing verify compares comes from it)
VERIFY_COMMANDS = ("show running-config", "show interface status", "show lldp neighbors detail", "show ip route",
                   "show ip bgp summary", "show bfd neighbors")
# which command each part of verify's observation comes from (vocabulary.Fact's values): a part whose
# command was not collected, or was answered with a CLI error, is not observed (a not_checked finding)
FACT_COMMANDS = {"hostname": "show running-config", "addresses": "show running-config", "bgp_config": "show running-config",
                 "link": "show interface status", "lldp": "show lldp neighbors detail", "routes": "show ip route",
                 "bgp_sessions": "show ip bgp summary", "bfd": "show bfd neighbors"}
# the CLI's answers to a command it does not take (docs/ruijie.md): the command's data is not there.
# ("% BGP instance is not running." is an answer: no BGP process.)
_CLI_ERRORS = ("% Invalid input", "% Incomplete command", "% Ambiguous command", "% Unknown command", "% Unrecognized command")


def command_error(output: str) -> str | None:
    """The CLI's error line when ``output`` is a refusal of the command rather than its output, else None."""
    for line in output.replace("\r", "\n").split("\n")[:5]:
        line = line.strip()
        if line.startswith(_CLI_ERRORS):
            return line[:200]
    return None
