"""The fair-play protocol, sans-IO: messages, the peer state machine, audit, transcripts."""

from p2pgotg.protocol.errors import (
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RuleViolation,
)
from p2pgotg.protocol.flow import HOST, JOINER, GameFlow, Phase
from p2pgotg.protocol.peer import Peer, Record
from p2pgotg.protocol.referee import Finding, Referee, Report, replay
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
    "HOST", "JOINER", "Finding", "GameFlow", "LocalProtocolError", "Peer", "Phase",
    "ProtocolError", "Record", "RecordReader", "Referee", "RemoteProtocolError", "Report",
    "RuleViolation", "Transcript",
    "TranscriptError", "Verdict", "encode_header", "encode_record", "parse", "replay",
]
