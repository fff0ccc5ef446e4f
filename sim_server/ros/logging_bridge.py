"""Forward the core's standard-library log records to a ROS node's logger."""

from __future__ import annotations

import logging

from rclpy.node import Node


class RosLogHandler(logging.Handler):
    """A logging handler that writes records through ``node.get_logger()``."""

    def __init__(self, node: Node) -> None:
        super().__init__()
        self._logger = node.get_logger()

    def emit(self, record: logging.LogRecord) -> None:
        message = self.format(record)
        if record.levelno >= logging.ERROR:
            self._logger.error(message)
        elif record.levelno >= logging.WARNING:
            self._logger.warning(message)
        elif record.levelno >= logging.INFO:
            self._logger.info(message)
        else:
            self._logger.debug(message)


def attach(node: Node, logger_name: str = "sim_server") -> RosLogHandler:
    """Route records of ``logger_name`` to ``node``'s logger; returns the handler to detach later."""
    handler = RosLogHandler(node)
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler


def detach(handler: RosLogHandler, logger_name: str = "sim_server") -> None:
    """Undo :func:`attach`."""
    logger = logging.getLogger(logger_name)
    logger.removeHandler(handler)
    if not logger.handlers:
        logger.propagate = True
