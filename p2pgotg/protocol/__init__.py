"""The fair-play protocol kernel, sans-IO: messages and the chain, the table, endings and
claims, the peer state machine, the verdict, transcripts. It knows no game: a game is a
subclass of its flow and its peer (`p2pgotg.games`)."""

from p2pgotg.protocol.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RuleViolation,
)
from p2pgotg.protocol.flow import HOST, JOINER, Flow, Phase
from p2pgotg.protocol.peer import Peer, Record
from p2pgotg.protocol.referee import Finding, Referee, Report
from p2pgotg.protocol.transcript import (
    RecordReader,
    Transcript,
    TranscriptError,
    encode_header,
    encode_record,
    parse,
)
from p2pgotg.protocol.verdict import Verdict

__all__ = [
    "HOST", "JOINER", "Finding", "Flow", "LocalProtocolError", "Peer", "Phase",
    "ProtocolError", "Record", "RecordReader", "Referee", "RemoteProtocolError", "Report",
    "RuleViolation", "Transcript",
    "TranscriptError", "Verdict", "encode_header", "encode_record", "parse",
]
