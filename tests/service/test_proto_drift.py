"""The committed generated code (tablanette/v1) must be exactly what scripts/gen_proto.sh makes from proto/."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

from arena_harness import ROOT

FIX = "the generated code in tablanette/v1 does not match proto/: run `bash scripts/gen_proto.sh` and commit the result"


def files_under(root: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(root)): p
        for p in sorted((root / "tablanette").rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_generated_code_matches_the_protos(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/gen_proto.sh"), str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"scripts/gen_proto.sh failed (is grpcio-tools installed?):\n{done.stderr}"

    generated, committed = files_under(tmp_path), files_under(ROOT)
    assert any(name.endswith("_pb2_grpc.py") for name in generated), sorted(generated)
    problems = []
    for name in sorted(set(generated) - set(committed)):
        problems.append(f"{name}: generated but not committed")
    for name in sorted(set(committed) - set(generated)):
        problems.append(f"{name}: committed but no longer generated")
    for name in sorted(set(generated) & set(committed)):
        want, have = generated[name].read_text(), committed[name].read_text()
        if want != have:
            diff = difflib.unified_diff(
                have.splitlines(), want.splitlines(), f"committed/{name}", f"generated/{name}", lineterm="", n=1
            )
            problems.append("\n".join(list(diff)[:20]))
    assert not problems, FIX + "\n\n" + "\n\n".join(problems)
