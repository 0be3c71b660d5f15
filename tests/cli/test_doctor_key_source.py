"""`ragline doctor` names the API key encryption key source in force, never the key; a
shared database without a key refuses to start with the settings named (issue 12, hole 8)."""

from __future__ import annotations

from pathlib import Path

from cryptography.fernet import Fernet

from tests.e2e.ragline_process import run


def test_doctor_shows_the_key_source_not_the_keys(tmp_path: Path) -> None:
    new, old = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    (tmp_path / ".env").write_text(f"RAGLINE_SECRET_KEY={new},{old}\n", encoding="utf-8")
    done = run(tmp_path / "data", "doctor")
    shown = done.stdout + done.stderr
    assert "API key encryption key: RAGLINE_SECRET_KEY (2 keys)" in shown, done.explain()
    assert new not in shown and old not in shown
    assert not (tmp_path / "data" / "secret.key").exists()


def test_a_shared_database_without_a_key_names_the_settings(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "RAGLINE_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test\n", encoding="utf-8"
    )
    done = run(tmp_path / "data", "status")
    assert done.returncode == 2, done.explain()  # a setting to fix: one line, no traceback
    shown = " ".join((done.stdout + done.stderr).split())
    assert "SecretKeyMissing" in shown and "RAGLINE_SECRET_KEY_FILE" in shown, done.explain()
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: SecretKeyMissing: ")
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "data" / "secret.key").exists()
