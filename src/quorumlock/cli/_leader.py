"""``quorumlock leader NAME``: who leads an election, read from a majority of the servers."""

from __future__ import annotations

import argparse
from typing import Any

from quorumlock._exceptions import QuorumUnavailable
from quorumlock.cli._common import (
    Parser,
    add_server_options,
    emit_json,
    lock_name,
    make_redlock,
    one_line,
    resolve_servers,
    say,
    scrub,
)

__all__ = ["add_parser"]

_EPILOG = """\
A leader is named when a majority of the servers agree on the same holder of the
election's lock and the same term (docs/election.md); its validity is the time it leads
at least, counted from before the read was sent. One round to every server; nothing is
changed on them.

The exit status is 0 when a majority answered (with a leader or none), 1 when too few
servers answered to tell (--json prints its JSON then too, with "error": the message).

examples:
  quorumlock leader scheduler
  quorumlock leader scheduler --json | jq .term
"""


def add_parser(subparsers: Any) -> Parser:
    parser: Parser = subparsers.add_parser(
        "leader",
        help="show who leads an election: identity, term, validity",
        description="Show the leader of the election NAME (rl.election(NAME) in the "
        "library): its identity, its term number and how long it leads at least.",
        epilog=_EPILOG,
    )
    parser.add_argument("name", metavar="NAME", type=lock_name, help="the election's name")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a line")
    add_server_options(parser)
    parser.set_defaults(handler=leader)
    return parser


def leader(args: argparse.Namespace) -> int:
    servers = resolve_servers(args)
    assert servers is not None
    # The ttl only sizes the wait for replies: --timeout does that here.
    with make_redlock(
        servers, instance_timeout=args.timeout, connect_timeout=args.timeout, max_ttl=None
    ) as rl:
        election = rl.election(args.name, ttl=max(args.timeout * 10, 1.0), identity="cli")
        try:
            found = election.leader()
        except QuorumUnavailable as exc:
            if args.json:  # the error line and the exit status follow, as without --json
                emit_json(
                    {
                        "name": args.name,
                        "leader": None,
                        "term": None,
                        "validity": None,
                        "error": scrub(one_line(str(exc))),
                    }
                )
            raise
    if args.json:
        emit_json(
            {
                "name": args.name,
                "leader": None if found is None else found.identity,
                "term": None if found is None else found.term,
                "validity": None if found is None else round(found.validity, 3),
            }
        )
    elif found is None:
        say(f"{args.name!r}: no leader")
    else:
        say(
            f"{args.name!r}: leader {found.identity!r}, term {found.term}, "
            f"valid for {found.validity:.3f} s"
        )
    return 0
