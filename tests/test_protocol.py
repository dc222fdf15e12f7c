"""The protocol-deviation table names only options that exist in the code."""
from replicate import protocol


def test_every_named_option_exists():
    assert protocol.check_options() == []


def test_check_options_detects_a_missing_option(monkeypatch):
    rows = protocol.DEVIATIONS + ({"topic": "x", "text": "", "code": "", "book": "",
                                   "option": "replicate.metrics.ece:no_such_parameter"},)
    monkeypatch.setattr(protocol, "DEVIATIONS", rows)
    assert protocol.check_options() == ["replicate.metrics.ece:no_such_parameter"]


def test_frame_has_one_row_per_deviation():
    frame = protocol.deviations_frame()
    assert len(frame) == len(protocol.DEVIATIONS)
    assert list(frame.columns) == ["topic", "papers' text", "authors' public code", "this book", "option"]
