"""`farmhand serve --log-format json`: one JSON object a line on stderr, for a log collector.

Each line has `time` (UTC, ISO 8601), `level`, `logger` and `message`; a request's line
(`server/request_log.py`) adds `method`, `route`, `status`, `duration_ms` and `request_id`,
and any line written while a request runs carries that request's `request_id`. An
exception's traceback is in `exception`. The standard `logging` module writes them: only the
formatter is farmhand's.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Literal

from farmhand.cli.common import quiet_logging
from farmhand.server.request_log import REQUEST_ID

LogFormat = Literal["text", "json"]
REQUEST_FIELDS = ("method", "route", "status", "duration_ms", "request_id")


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in REQUEST_FIELDS:
            if name in record.__dict__:
                entry[name] = record.__dict__[name]
        if "request_id" not in entry and (current := REQUEST_ID.get()) is not None:
            entry["request_id"] = current
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def serve_logging(level: str, form: LogFormat) -> None:
    """farmhand's loggers at `level` (the rest at warning, as every command has them), their
    lines in `form` on stderr. In json the root handler takes uvicorn's own lines too (the
    caller runs uvicorn without its logging config)."""
    quiet_logging(level)
    if form == "json":
        logging.captureWarnings(True)  # Python's warnings as log lines too, not bare text
        formatter = JsonFormatter()
        for handler in logging.getLogger().handlers:
            handler.setFormatter(formatter)
