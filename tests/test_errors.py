"""The one translation point for redis errors (quorumlock._io.errors): the texts servers
of different versions send for the same failure get the same verdict."""

from __future__ import annotations

import ssl

import pytest
from redis import exceptions as rx
from redis.sentinel import MasterNotFoundError

from quorumlock import Reply
from quorumlock._algorithm.scripts import ACQUIRE
from quorumlock._io import errors
from quorumlock._io.errors import translate

# The first line of the acquire script that calls HSET (1-based, as Redis counts).
HSET_LINE = next(
    i for i, line in enumerate(ACQUIRE.source.splitlines(), 1) if 'redis.call("hset"' in line
)
PREFIX = (
    f"Error running script (call to f_{ACQUIRE.sha}): "
    f"@user_script:{HSET_LINE}: @user_script: {HSET_LINE}: "
)


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("READONLY You can't write against a read only replica.", Reply.FATAL),  # 7.0+
        (PREFIX + "-READONLY You can't write against a read only replica.", Reply.FATAL),  # 6.2
        (PREFIX + "-OOM command not allowed when used memory > 'maxmemory'.", Reply.ERROR),
        ("LOADING Redis is loading the dataset in memory", Reply.ERROR),
        # set-up errors no retry fixes: protected mode, a database the server lacks
        (
            "DENIED Redis is running in protected mode because protected mode is enabled "
            "and no password is set for the default user.",
            Reply.FATAL,
        ),
        ("DB index is out of range", Reply.FATAL),  # redis-py drops the "ERR "
        ("ERR DB index is out of range", Reply.FATAL),
        ("Client names cannot contain spaces, newlines or special characters.", Reply.FATAL),
        (
            "ACL failure in script: User u has no permissions to run the 'hset' command",
            Reply.FATAL,
        ),
        (
            PREFIX + "The user executing the script can't run this command or subcommand",
            Reply.FATAL,
        ),
    ],
)
def test_script_errors_of_every_server_version(text: str, reply: Reply) -> None:
    assert translate(rx.ResponseError(text))[0] is reply


def test_redis_62_acl_refusals_in_a_script_are_named() -> None:
    """Redis 6.2 gives only the script's digest and line: the call is looked up."""
    text = PREFIX + "The user executing the script can't run this command or subcommand"
    _, detail = translate(rx.ResponseError(text))
    assert detail.endswith(f"(line {HSET_LINE} of quorumlock's acquire script: hset)")


def test_tls_refusals_are_fatal_and_say_which_side() -> None:
    verify = ssl.SSLCertVerificationError(1, "certificate verify failed")
    verify.verify_message = "unable to get local issuer certificate"
    wrapped = rx.ConnectionError("Error 1 connecting to 127.0.0.1:6380.")
    wrapped.__cause__ = verify
    assert translate(wrapped) == (
        Reply.FATAL,
        "TLS: the server's certificate is not trusted (unable to get local issuer certificate)",
    )
    alert = ssl.SSLError(1, "tlsv13 alert certificate required")
    alert.reason = "TLSV13_ALERT_CERTIFICATE_REQUIRED"
    wrapped = rx.ConnectionError("Error while reading from 127.0.0.1:6380")
    wrapped.__context__ = alert
    reply, detail = translate(wrapped)
    assert reply is Reply.FATAL
    assert "requires a client certificate" in detail
    eof = rx.ConnectionError("Error 8 while writing to socket. EOF occurred in violation")
    eof.__context__ = ssl.SSLEOFError(8, "EOF occurred in violation of protocol")
    assert translate(eof)[0] is Reply.ERROR  # a server killed mid-connection: retry


class SSLConnection:
    """Stands for redis-py's TLS connection (its type's name and ``certfile``) in the
    traceback that tells a reset during set-up from one on a connection in use."""

    def __init__(self, certfile: str | None) -> None:
        self.certfile = certfile

    def on_connect(self) -> None:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError as exc:
            raise rx.ConnectionError("Error while reading from 127.0.0.1:6380") from exc


def reset_while(connection: object) -> rx.ConnectionError:
    try:
        connection.on_connect()  # type: ignore[attr-defined]
    except rx.ConnectionError as exc:
        return exc
    raise AssertionError("no reset")


class Connection(SSLConnection):
    """A plain connection (no "SSL" in its type's name)."""


def test_a_reset_right_after_the_tls_handshake_is_a_refusal_of_our_certificate() -> None:
    """Over TLS 1.3 a server that refuses the certificate we showed (or its absence) may
    reset the connection under our first command instead of sending its alert (seen
    about once in 60 attempts with a certificate of another CA): fatal, as the alert
    is, where a blocking acquire retried until its timeout. A reset of a plain
    connection, or of one in use, is a server going away: retried."""
    assert translate(reset_while(SSLConnection("rogue.pem"))) == (
        Reply.FATAL,
        "TLS: the server refused our client certificate (it reset the connection right "
        "after the TLS handshake)",
    )
    reply, detail = translate(reset_while(SSLConnection(None)))
    assert reply is Reply.FATAL
    assert detail.startswith("TLS: the server requires a client certificate")
    assert translate(reset_while(Connection("ours.pem")))[0] is Reply.ERROR
    in_use = rx.ConnectionError("Error while reading from 127.0.0.1:6380")
    in_use.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    assert translate(in_use)[0] is Reply.ERROR


class ClosingSSLConnection(SSLConnection):
    """A TLS connection whose server closed it during the set-up, with no reset: the
    server went away (a restart, say), not a refusal of our certificate."""

    def on_connect(self) -> None:
        raise rx.ConnectionError("Connection closed by server.")


def test_a_tls_connection_closed_during_its_set_up_without_a_reset_is_retried() -> None:
    """Only a reset (or an EOF) right after the handshake reads as a refusal: any other
    failure of the set-up is transient, where a fatal verdict would end a blocking
    acquire at once."""
    for certfile in (None, "ours.pem"):
        assert translate(reset_while(ClosingSSLConnection(certfile))) == (
            Reply.ERROR,
            "Connection closed by server.",
        )


class HandshakingSSLConnection(SSLConnection):
    """A TLS connection whose server never answers the handshake (a plain server): the
    ssl module's timeout, as redis-py wraps it."""

    def on_connect(self) -> None:
        try:
            raise TimeoutError("_ssl.c:989: The handshake operation timed out")
        except TimeoutError as exc:
            raise rx.TimeoutError("Timeout connecting to server") from exc


class ClosingConnection(Connection):
    """A plain connection whose server closed it under the first command (a TLS port)."""

    def on_connect(self) -> None:
        raise rx.ConnectionError("Connection closed by server.")


def test_a_scheme_that_does_not_match_the_server_is_named_and_retried() -> None:
    """rediss:// to a plain server times out in the TLS handshake; redis:// to a TLS
    port is closed (or reset) under the first command. Each detail names the likely
    cause, where they said "no reply in time" or "Connection closed by server.". Not
    fatal: a frozen server, or one going away, fails the same way. A timeout or a close
    of a connection in use, or a TLS connection closed, is none of these."""
    with pytest.raises(rx.TimeoutError) as timeout:
        HandshakingSSLConnection(None).on_connect()
    reply, detail = translate(timeout.value)
    assert reply is Reply.TIMEOUT
    assert detail == (
        "TLS: the server did not answer the handshake (is it TLS-enabled? use redis:// for "
        "a plain server)"
    )
    tls_port = (
        "the server ended the connection at our first command, without a reply (going "
        "away, or a TLS port? use rediss:// for TLS)"
    )
    assert translate(reset_while(ClosingConnection(None))) == (Reply.ERROR, tls_port)
    assert translate(reset_while(Connection(None))) == (Reply.ERROR, tls_port)  # a reset
    assert translate(rx.TimeoutError("Timeout reading from socket")) == (
        Reply.TIMEOUT,
        "no reply in time",
    )
    assert translate(rx.ConnectionError("Connection closed by server."))[1] == (
        "Connection closed by server."
    )


def test_a_wrong_password_is_not_reported_as_a_missing_one() -> None:
    wrong = rx.AuthenticationError("invalid username-password pair or user is disabled.")
    assert translate(wrong) == (
        Reply.FATAL,
        "invalid username-password pair or user is disabled.",
    )
    missing = rx.AuthenticationError("Authentication required.")
    assert translate(missing) == (
        Reply.FATAL,
        "the server requires a password, and none was given",
    )


def test_passwords_of_four_characters_or_more_are_scrubbed_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A password is scrubbed from every detail once known, the longest first (one that
    holds another is not left half shown); shorter than four characters, it would blank
    out ordinary words, and is not."""
    monkeypatch.setattr(errors, "_SECRETS", set())
    for secret in ("pw42", "pw42-and-more", "abc"):
        errors.never_show(secret)
    detail = translate(rx.ResponseError("ERR abc pw42-and-more pw42"))[1]
    assert detail == "ERR abc *** ***"


def test_a_master_no_sentinel_names_is_said_in_a_few_words() -> None:
    """redis-py's MasterNotFoundError carries every sentinel client's repr and error
    (over a thousand characters, in every outcome, exception and log line)."""
    reached = MasterNotFoundError(
        "No master found for 'mymaster' : <redis.client.Redis(<redis.connection."
        "ConnectionPool(<redis.connection.Connection(host=127.0.0.1,port=26379)>)>)> - "
        "ConnectionError('Error 111 connecting to 127.0.0.1:26379. Connection refused.')"
    )
    assert translate(reached) == (
        Reply.ERROR,
        "No master found for 'mymaster': no sentinel could be reached (a retry may find one)",
    )
    unknown = MasterNotFoundError("No master found for 'nosuch'")
    assert translate(unknown)[1] == (
        "No master found for 'nosuch': the sentinels know no such master (a retry may find one)"
    )
