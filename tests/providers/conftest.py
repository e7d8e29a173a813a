from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.providers.fake_backend import close_all


@pytest.fixture(autouse=True)
def stop_fake_backends() -> Iterator[None]:
    yield
    close_all()
