"""A body sent without a JSON content type gets a 422 that says which header to send."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.service.test_service import make_collection, serving


def test_form_content_type_is_told_to_send_json(tmp_path: Path) -> None:
    db = make_collection(tmp_path / "c.db")
    body = '{"documents": [{"id": "n1", "text": "the old harbour of the town was rebuilt"}]}'
    with serving(str(db), tmp_path / "server.log") as server:
        as_form = subprocess.run(  # curl -d sends application/x-www-form-urlencoded
            ["curl", "-s", "-w", "\n%{http_code}", "-X", "POST", f"{server.url}/documents",
             "-d", body],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        as_json = subprocess.run(
            ["curl", "-s", "-w", "\n%{http_code}", "-X", "POST", f"{server.url}/documents",
             "-H", "Content-Type: application/json", "-d", body],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    answer, code = as_form.stdout.rsplit("\n", 1)
    assert code == "422"
    assert "send Content-Type: application/json" in answer
    assert "application/x-www-form-urlencoded" in answer
    answer, code = as_json.stdout.rsplit("\n", 1)
    assert code == "200", answer
    assert '"id":"n1"' in answer.replace(" ", "")
