"""Agent specs for model files: short, safe checkpoint errors; exported .onnx/.npz agents; ``default``."""

from __future__ import annotations

import datetime
import os

import numpy as np
import pytest
import torch

from bgai.agents import registry
from bgai.agents.registry import default_model_spec, make_agent, resolve_spec
from bgai.cli import main
from bgai.core.position_id import decode_position_id
from bgai.errors import AgentSpecError, CheckpointError

POSITIONS = ["4HPwATDgc/ABMA", "HC/wATDg8+AxAA", "zGbiIQgxH/AAWA", "AACAewAAgAYAAA", "8N4ZAAbg/xMAIA"]


def _make_checkpoint(path, seed: int = 5) -> str:
    """A freshly initialised net (weights scaled up so plays differ), saved with bgai's checkpoint writer."""
    from bgai.model.bundle import build_checkpoint, save_checkpoint
    from bgai.model.features import get_encoder
    from bgai.model.nets import NetSpec, ValueNet

    enc = get_encoder("tesauro198")
    net = ValueNet(NetSpec(enc.size, (24,), "sigmoid"), torch.Generator().manual_seed(seed))
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(4.0)
    save_checkpoint(build_checkpoint(net, enc, {}, 0, []), str(path))
    return str(path)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """``(checkpoint path, onnx path, npz path)``."""
    from bgai.model.export import export_checkpoint

    d = tmp_path_factory.mktemp("models")
    ckpt = _make_checkpoint(d / "net.pt")
    written = export_checkpoint(ckpt, d / "net.onnx")
    return ckpt, written["onnx"], written["npz"]


def _hint(capsys, *args):
    code = main(["hint", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- item 2: corrupt / foreign files -> one short line, never torch's unsafe advice ------------------------------


def _assert_safe(msg: str) -> None:
    low = msg.lower()
    assert "weights_only" not in low and "arbitrary code" not in low and "\n" not in msg.strip()
    assert len(msg) < 300


def test_garbage_file_is_not_a_torch_zip(tmp_path, capsys):
    bad = tmp_path / "x.pt"
    bad.write_text("garbage\n")
    with pytest.raises(CheckpointError) as exc:
        make_agent(str(bad))
    assert str(exc.value) == f"checkpoint {str(bad)!r} is corrupt or not a bgai checkpoint (not a torch zip file)"
    code, out, err = _hint(capsys, "4HPwATDgc/ABMA", "31", "--agent", str(bad))
    assert code == 2 and out == ""
    assert err == f"bgai: error: checkpoint {str(bad)!r} is corrupt or not a bgai checkpoint (not a torch zip file)\n"
    assert main(["export", str(bad), "--out", str(tmp_path / "m.onnx")]) == 2
    err = capsys.readouterr().err
    assert err == f"bgai: error: checkpoint {str(bad)!r} is corrupt or not a bgai checkpoint (not a torch zip file)\n"
    assert sorted(os.listdir(tmp_path)) == ["x.pt"]


def test_damaged_zip_and_unsafe_pickle_give_short_safe_messages(tmp_path, model):
    import zipfile

    damaged = tmp_path / "damaged.pt"
    with zipfile.ZipFile(damaged, "w") as z:
        z.writestr("archive/data.pkl", b"garbage")
    with pytest.raises(CheckpointError) as exc:
        make_agent(str(damaged))
    assert str(exc.value) == f"checkpoint {str(damaged)!r} is corrupt or not a bgai checkpoint (torch could not read it)"

    unsafe = tmp_path / "unsafe.pt"  # a global the safe loader refuses: torch would advise weights_only=False
    torch.save({"format": "bgai-checkpoint", "when": datetime.date(2020, 1, 1)}, unsafe)
    with pytest.raises(CheckpointError) as exc:
        make_agent(f"{unsafe}:ply=1")
    assert str(exc.value) == f"checkpoint {str(unsafe)!r} is corrupt or not a bgai checkpoint (torch could not read it)"
    _assert_safe(str(exc.value))

    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(open(model[0], "rb").read()[:-200])
    with pytest.raises(CheckpointError) as exc:
        make_agent(str(truncated))
    assert str(exc.value).startswith(f"checkpoint {str(truncated)!r} is corrupt or not a bgai checkpoint (")
    _assert_safe(str(exc.value))


def test_foreign_torch_file_keeps_bgai_message(tmp_path):
    foreign = tmp_path / "foreign.pt"
    torch.save({"a": torch.zeros(2)}, foreign)
    with pytest.raises(CheckpointError, match=r"is a torch file but not a bgai checkpoint"):
        make_agent(str(foreign))


def test_config_file_as_agent(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("a: 1\n")
    code, _, err = _hint(capsys, "4HPwATDgc/ABMA", "31", "--agent", str(cfg))
    assert code == 2 and err.startswith(f"bgai: error: {str(cfg)!r} is a configuration file, not a model")
    _assert_safe(err)


# --- item 3: exported models as agents -------------------------------------------------------------------------


def test_exported_models_play_like_the_checkpoint_at_0_ply(model, capsys):
    from bgai.agents.neural import NeuralAgent
    from bgai.agents.numpy_bot import NumpyAgent

    ckpt, onnx_path, npz_path = model
    boards = np.stack([decode_position_id(p) for p in POSITIONS])
    ref = NeuralAgent.load(ckpt, ply=0).probabilities(boards)
    for path in (onnx_path, npz_path, f"{npz_path}:ply=0"):
        agent = make_agent(path)
        assert isinstance(agent, NumpyAgent) and agent.spec == path
        np.testing.assert_allclose(agent.probabilities(boards), ref, atol=1e-5)
    hints = []
    for agent in (ckpt, onnx_path, npz_path):
        code, out, _ = _hint(capsys, "4HPwATDgc/ABMA", "31", "--agent", agent)
        assert code == 0
        hints.append(out.splitlines()[1:])  # the ranked plays (first line names the agent/position)
    assert hints[0][0].split()[:2] == hints[1][0].split()[:2] == hints[2][0].split()[:2]


def test_exported_model_errors(model, tmp_path):
    from bgai.agents import numpy_bot as infer
    from bgai.model import export

    assert infer.EXPORT_FORMAT == export.EXPORT_FORMAT
    _, onnx_path, _ = model
    with pytest.raises(AgentSpecError, match="0-ply only"):
        make_agent(f"{onnx_path}:ply=1")
    (tmp_path / "lonely.onnx").write_bytes(b"x")
    with pytest.raises(CheckpointError, match=r"'.*lonely\.onnx' is not a usable bgai export: no numpy weights"):
        make_agent(str(tmp_path / "lonely.onnx"))
    np.savez(tmp_path / "foreign.npz", x=np.zeros(3))
    with pytest.raises(CheckpointError, match=r"'.*foreign\.npz' is not a usable bgai export"):
        make_agent(str(tmp_path / "foreign.npz"))
    np.savez(tmp_path / "nometa.npz", W0=np.zeros((5, 198), np.float32), b0=np.zeros(5, np.float32), meta='{"a": 1}')
    with pytest.raises(CheckpointError, match=r"nometa\.npz' is not a bgai numpy export \(no 'bgai_export_format'"):
        make_agent(str(tmp_path / "nometa.npz"))
    meta = '{"bgai_export_format": "2", "encoding": "tesauro198"}'
    np.savez(tmp_path / "v2.npz", W0=np.zeros((5, 198), np.float32), b0=np.zeros(5, np.float32), meta=meta)
    with pytest.raises(CheckpointError, match=r"v2\.npz' has export format '2'; this bgai reads format 1"):
        make_agent(str(tmp_path / "v2.npz"))
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(CheckpointError, match=r"junk\.npz"):
        make_agent(str(tmp_path / "junk.npz"))
    with pytest.raises(CheckpointError, match=r"model file .*none\.onnx. does not exist"):
        make_agent(str(tmp_path / "none.onnx"))


# --- item 6: default -------------------------------------------------------------------------------------------


def test_default_uses_bgai_model(model, monkeypatch, capsys):
    from bgai.agents.neural import NeuralAgent
    from bgai.cli.serve import make_bot
    from bgai.serve.bot import default_agent_spec

    ckpt = model[0]
    monkeypatch.setenv("BGAI_MODEL", ckpt)
    agent = make_agent("default")
    assert isinstance(agent, NeuralAgent) and agent.ply == 0 and agent.spec == ckpt
    assert make_agent("default:ply=1").ply == 1
    assert resolve_spec("default:ply=2") == f"{ckpt}:ply=2"
    assert resolve_spec("pubeval") == "pubeval"
    assert default_agent_spec() == ckpt
    bot = make_bot("default")
    assert bot.spec == ckpt and bot.has_probabilities
    monkeypatch.setenv("BGAI_MODEL", f"{ckpt}:ply=1")
    assert make_agent("default").ply == 1
    code, out_default, _ = _hint(capsys, "4HPwATDgc/ABMA", "31", "--agent", "default")
    code2, out_path, _ = _hint(capsys, "4HPwATDgc/ABMA", "31", "--agent", f"{ckpt}:ply=1")
    assert code == code2 == 0
    plays = out_default.splitlines()[1:]  # the first line names the agent as given
    assert len(plays) >= 5 and plays == out_path.splitlines()[1:]
    capsys.readouterr()
    assert main(["eval", "default", "random", "--games", "2", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("default vs random: 2 games") and f"bgai: note: default is {ckpt}:ply=1\n" in err


def test_default_is_the_manifest_model_not_the_newest_file(tmp_path, monkeypatch):
    # a user's newer checkpoint in the folder (or a corrupt one) must not change what 'default' means
    monkeypatch.delenv("BGAI_MODEL", raising=False)
    shipped = _make_checkpoint(tmp_path / "b-shipped.pt", seed=1)
    newer = _make_checkpoint(tmp_path / "a-new.pt", seed=2)
    os.utime(shipped, (1_000_000, 1_000_000))
    os.utime(newer, (2_000_000, 2_000_000))
    (tmp_path / "zzz-corrupt.pt").write_bytes(b"not a checkpoint")
    (tmp_path / "models.json").write_text('{"default": "b-shipped.pt"}')
    monkeypatch.setattr(registry, "CHECKPOINT_DIR", str(tmp_path))
    assert default_model_spec() == shipped
    assert make_agent("default").spec == shipped
    (tmp_path / "models.json").write_text('{"default": "../elsewhere.pt"}')
    with pytest.raises(AgentSpecError, match="must be a file name"):
        default_model_spec()
    (tmp_path / "models.json").write_text('{"default": "gone.pt"}')
    with pytest.raises(CheckpointError, match=r"default model .*gone\.pt' named in .*models\.json does not exist"):
        default_model_spec()


def test_repository_manifest_names_the_shipped_model(monkeypatch):
    monkeypatch.delenv("BGAI_MODEL", raising=False)
    assert os.path.basename(default_model_spec()) == "bgai-sl8.pt"


def test_default_without_model_is_an_error_not_pubeval(tmp_path, monkeypatch, capsys):
    from bgai.cli.serve import make_bot

    monkeypatch.delenv("BGAI_MODEL", raising=False)
    monkeypatch.setattr(registry, "CHECKPOINT_DIR", str(tmp_path))
    with pytest.raises(AgentSpecError, match=r"no default model: .*models\.json does not exist and \$BGAI_MODEL is not set"):
        make_agent("default")
    with pytest.raises(AgentSpecError, match="no default model"):
        make_bot("default")
    assert main(["serve", "http", "--port", "0", "--agent", "default"]) == 2
    assert "no default model" in capsys.readouterr().err
    monkeypatch.setenv("BGAI_MODEL", str(tmp_path / "missing.pt"))
    with pytest.raises(CheckpointError, match=r"\$BGAI_MODEL='.*missing\.pt': model file '.*missing\.pt' does not exist"):
        make_agent("default")
    monkeypatch.setenv("BGAI_MODEL", "pubeval")
    with pytest.raises(AgentSpecError, match="must name a model file"):
        make_agent("default")


def test_option_errors_name_the_spec_as_given(model, monkeypatch):
    """A bad ply on ``default`` names ``default:ply=7`` (not only the file it stands for); an empty option group
    (``default:``, ``m.pt:``, ``m.pt::ply=1``) is refused, not read as no options; a trailing comma is harmless."""
    ckpt = model[0]
    monkeypatch.setenv("BGAI_MODEL", ckpt)
    with pytest.raises(AgentSpecError, match=r"^ply must be 0, 1 or 2, got 7 \(agent spec 'default:ply=7', that is "
                                             r"'.*net\.pt:ply=7'\)$"):
        make_agent("default:ply=7")
    monkeypatch.setenv("BGAI_MODEL", f"{ckpt}:ply=7")  # the bad option from $BGAI_MODEL: its value is shown
    with pytest.raises(AgentSpecError, match=r"got 7 \(agent spec 'default', that is '.*net\.pt:ply=7'\)$"):
        make_agent("default")
    monkeypatch.setenv("BGAI_MODEL", f"{ckpt}:")
    with pytest.raises(AgentSpecError, match=r"^\$BGAI_MODEL='.*net\.pt:': empty options after ':'"):
        make_agent("default:ply=1")
    monkeypatch.setenv("BGAI_MODEL", ckpt)
    with pytest.raises(AgentSpecError, match=r"got 3 \(agent spec '.*net\.pt:ply=3'\)$"):
        make_agent(f"{ckpt}:ply=3")
    for spec in ("default:", f"{ckpt}:", f"{ckpt}::ply=1", "pubeval:"):
        with pytest.raises(AgentSpecError, match=r"^empty options after ':' in agent spec "):
            make_agent(spec)
    assert make_agent(f"{ckpt}:ply=1,").ply == 1


def test_weights_of_the_wrong_size_name_the_mismatch(model, tmp_path):
    """A checkpoint whose stored sizes do not match its weights: one line with torch's first mismatch (not only
    torch's header 'Error(s) in loading state_dict') and the count of the others."""
    ck = torch.load(model[0], weights_only=True)
    ck["nets"][0]["spec"]["hidden"] = [12]  # the weights are of 24 hidden units
    bad = tmp_path / "wrong.pt"
    torch.save(ck, bad)
    with pytest.raises(CheckpointError) as info:
        make_agent(str(bad))
    msg = str(info.value)
    name = ck["nets"][0]["name"]
    assert f"the {name!r} net's weights do not fit its sizes (size mismatch for body.0.weight: copying a param " \
           "with shape torch.Size([24, 198]) from checkpoint, the shape in current model is torch.Size([12, 198]); " \
           "2 more)" in msg
    _assert_safe(msg)


def test_hidden_sizes_stored_as_a_string_are_refused(model, tmp_path):
    """``hidden: '24'`` in a checkpoint's net description is refused as such, not read as the layers 2 and 4."""
    ck = torch.load(model[0], weights_only=True)
    ck["nets"][0]["spec"]["hidden"] = "24"
    bad = tmp_path / "str.pt"
    torch.save(ck, bad)
    with pytest.raises(CheckpointError, match=r"'hidden' must be a list of layer sizes, got '24'"):
        make_agent(str(bad))


def test_options_on_named_agents_are_read_as_options():
    """``default:ply`` and ``random:seed=1`` are a named agent with a bad option (not an unknown agent, nor a
    list of checkpoint options for a bot that takes none); ply errors share one wording."""
    with pytest.raises(AgentSpecError, match=r"^bad option 'ply' in agent spec 'default:ply': expected key=value$"):
        make_agent("default:ply")
    with pytest.raises(AgentSpecError, match=r"^unknown option 'seed' in agent spec 'random:seed=1': agent 'random' "
                                             r"takes no options$"):
        make_agent("random:seed=1")
    with pytest.raises(AgentSpecError, match=r"^unknown option 'x' in agent spec 'bgsage:x=1': agent 'bgsage' takes "
                                             r"only ply$"):
        make_agent("bgsage:x=1")
    with pytest.raises(AgentSpecError, match=r"^ply must be 0 or more, got -1 \(agent spec 'default:ply=-1'\)$"):
        make_agent("default:ply=-1")
