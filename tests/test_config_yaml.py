"""bgai's YAML loader (bgai.train.config.yaml_load, used by every config reader: ``bgai train``, ``bgai
generations``, ``--set`` values): a key given twice in one mapping is a one-line error naming the key and both
lines, where PyYAML alone keeps the last value silently."""

from __future__ import annotations

import pytest
import yaml

from bgai.cli import main
from bgai.errors import ConfigError
from bgai.train.config import load_config, parse_override, read_yaml_file, yaml_load


def test_plain_pyyaml_keeps_the_last_value_silently():
    assert yaml.safe_load("lr: 0.1\nlr: 0.2\n") == {"lr": 0.2}  # what the check is for


@pytest.mark.parametrize("text, message", [
    ("lr: 0.1\nlam: 0.7\nlr: 0.2\n", "duplicate key 'lr' on line 3 (first on line 1)"),
    ("algorithm: td\ntd:\n  lr: 0.1\n  lam: 0.7\n  lr: 0.2\n", "duplicate key 'lr' on line 5 (first on line 3)"),
    ("run: {games: 10, seed: 1, games: 20}\n", "duplicate key 'games' on line 1 (first on line 1)"),
    ("- {a: 1}\n- {b: 1, b: 2}\n", "duplicate key 'b' on line 2 (first on line 2)"),
    ("1: x\n1: y\n", "duplicate key 1 on line 2 (first on line 1)"),
])
def test_duplicate_keys_are_refused(text, message):
    with pytest.raises(yaml.YAMLError) as err:
        yaml_load(text)
    assert str(err.value) == message


def test_same_key_in_different_mappings_and_merge_overrides_are_fine():
    assert yaml_load("td: {lr: 0.1}\nsupervised: {lr: 1e-3}\n") == {"td": {"lr": 0.1}, "supervised": {"lr": 1e-3}}
    text = "base: &b {lr: 0.1, lam: 0.7}\ntd:\n  <<: *b\n  lr: 0.2\n"  # '<<' merge, then an explicit override
    assert yaml_load(text)["td"] == {"lr": 0.2, "lam": 0.7}


def test_config_file_and_override_errors_name_the_key_and_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("algorithm: td\ntd:\n  lr: 0.1\n  lam: 0.7\n  lr: 0.2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_yaml_file(path)
    assert str(err.value) == (f"config {str(path)!r} is not valid YAML: duplicate key 'lr' on line 5 "
                              "(first on line 3)")
    with pytest.raises(ConfigError, match="duplicate key 'lr' on line 5"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"cannot parse the value \(duplicate key 'a' on line 1"):
        parse_override("hidden={a: 1, a: 2}")


def test_cli_train_is_one_line_and_makes_no_folder(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("games: 100\nhidden: [16]\ngames: 200\n", encoding="utf-8")
    out = tmp_path / "run"
    assert main(["train", "--config", str(path), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"bgai: error: config {str(path)!r} is not valid YAML: duplicate key 'games' on line 3 "
                     "(first on line 1)"]
    assert not out.exists()
