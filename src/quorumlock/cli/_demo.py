"""placeholder"""

from typing import Any


def add_parser(subparsers: Any) -> Any:
    p = subparsers.add_parser("demo")
    return p
