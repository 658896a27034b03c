"""Match equity table: the Kazaross-XG2 figures, lookups, post-Crawford semantics, bad input."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from bgai.errors import MatchStateError
from bgai.game.met import MatchEquityTable, load_met

GNUBG_MET = "/usr/share/gnubg/met/Kazaross-XG2.xml"


@pytest.fixture(scope="module")
def met() -> MatchEquityTable:
    return load_met()


def test_spot_values_of_the_published_table(met):
    # Kazaross-XG2 as published in GNU Backgammon's met/Kazaross-XG2.xml (row = me, column = opponent, away)
    assert met.name == "Kazaross-XG2"
    assert met.native_length == 25  # the published table; extended to 64 points at load, as gnubg does
    assert met.length == 64
    assert met.mwc(1, 1) == 0.5
    assert met.mwc(1, 2) == pytest.approx(0.67736)  # Crawford game, leader 1-away vs 2-away
    assert met.mwc(2, 1) == pytest.approx(0.32264)
    assert met.mwc(2, 2) == 0.5
    assert met.mwc(2, 3) == pytest.approx(0.59947)
    assert met.mwc(3, 5) == pytest.approx(0.64795)
    assert met.mwc(5, 7) == pytest.approx(0.62638)
    assert met.mwc(7, 5) == pytest.approx(0.37362)
    assert met.mwc(11, 11) == 0.5
    assert met.mwc(25, 1) == pytest.approx(0.00095)
    # post-Crawford: trailer's chances against a 1-away leader
    assert met.mwc(1, 1, post_crawford=True) == 0.5
    assert met.mwc(2, 1, post_crawford=True) == pytest.approx(0.48803)
    assert met.mwc(1, 2, post_crawford=True) == pytest.approx(1 - 0.48803)
    assert met.mwc(3, 1, post_crawford=True) == pytest.approx(0.32264)
    assert met.mwc(4, 1, post_crawford=True) == pytest.approx(0.31002)


def test_table_is_consistent(met):
    pre, post = met.pre_crawford, met.post_crawford
    np.testing.assert_allclose(pre + pre.T, 1.0, atol=1e-9)
    # more points needed -> fewer chances; opponent needs more -> more chances
    assert np.all(np.diff(pre, axis=0) < 0)
    assert np.all(np.diff(pre, axis=1) > 0)
    # post-Crawford: 2k and 2k+1 away differ only by the free drop, and the chances fall with distance
    assert np.all(np.diff(post) <= 0)
    # the Crawford game is worth less to the trailer than post-Crawford at the same distance -- in the published
    # table; gnubg's extension beyond it (normal model pre-Crawford, Zadeh's recursion post-Crawford) does not
    # keep this relation, and test_formats_defects.py checks the extension entry by entry against gnubg
    n = met.native_length
    assert np.all(pre[1:n, 0] < post[1:n])
    assert pre[1, 0] == pytest.approx(post[2])  # 2-away Crawford == 3-away post-Crawford (Kazaross-XG2 ties)


@pytest.mark.skipif(not os.path.exists(GNUBG_MET), reason="GNU Backgammon's met/Kazaross-XG2.xml not installed")
def test_whole_table_equals_gnubgs_file(met):
    text = re.sub(r"<!DOCTYPE[^>]*>", "", open(GNUBG_MET, encoding="utf-8").read())
    root = ET.fromstring(text)
    pre = [[float(m.text) for m in row.findall("me")] for row in root.find("pre-crawford-table").findall("row")]
    post = [float(m.text) for m in root.find("post-crawford-table").find("row").findall("me")]
    np.testing.assert_array_equal(met.pre_crawford[:25, :25], np.array(pre))
    # gnubg's InitMatchEquity copies all but the last post-Crawford entry (a post-Crawford trailer in a 25-point
    # match is at most 24-away) and computes the 25-away entry with Zadeh's formula, so does bgai
    assert len(post) == 25
    np.testing.assert_array_equal(met.post_crawford[:24], np.array(post[:24]))
    assert met.post_crawford[24] == pytest.approx(0.25 * 0.5 * post[20] + 0.75 * 0.5 * post[22], abs=1e-8)


def test_mwc_after_a_game(met):
    # 5-away vs 5-away, I win a single: 4-away vs 5-away, pre-Crawford
    assert met.mwc_after(5, 5, 1) == pytest.approx(met.mwc(4, 5))
    # a gammon with the cube on 2 (4 points) from 3-away wins the match; losing 4 loses it
    assert met.mwc_after(3, 7, 4) == 1.0
    assert met.mwc_after(7, 3, -4) == 0.0
    # reaching 1-away for the first time: the next game is the Crawford game (pre-Crawford table row 1)
    assert met.mwc_after(2, 5, 1) == pytest.approx(met.mwc(1, 5))
    # from the Crawford game, the next game is post-Crawford
    assert met.mwc_after(1, 5, -1, crawford=True) == pytest.approx(1 - met.mwc(4, 1, post_crawford=True))
    # already 1-away (post-Crawford): stays post-Crawford
    assert met.mwc_after(4, 1, 2) == pytest.approx(met.mwc(2, 1, post_crawford=True))


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((0, 3), {}, "at least 1 point"),
        ((3, 65), {}, "covers matches up to 64"),
        ((3, 4), {"post_crawford": True}, "1-away"),
        ((2.5, 3), {}, "integer"),
    ],
)
def test_bad_scores(met, args, kwargs, match):
    with pytest.raises(MatchStateError, match=match):
        met.mwc(*args, **kwargs)


def test_load_errors(tmp_path):
    with pytest.raises(MatchStateError, match="unknown match equity table"):
        load_met("no-such-table")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pre_crawford": [[0.5, 0.6]], "post_crawford": [0.5]}))
    with pytest.raises(MatchStateError, match="square"):
        load_met(str(bad))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(MatchStateError, match="cannot read"):
        load_met(str(broken))
    ok = tmp_path / "tiny.json"
    ok.write_text(json.dumps({"name": "tiny", "pre_crawford": [[0.5, 0.7], [0.3, 0.5]], "post_crawford": [0.5, 0.45]}))
    t = load_met(str(ok))
    # every table is extended to 64 points at load, as GNU Backgammon does; its own entries are kept
    assert t.native_length == 2 and t.length == 64 and t.mwc(1, 2) == 0.7
