"""Runs AWS CLI commands in one process, each as `aws` itself runs it (awscli.clidriver: a new driver, the
same parsing, request and output formatting), so a test pays the CLI's start-up once rather than per command.

Input (stdin): a JSON list of argument lists. Output (stdout): a JSON list of {status, stdout, stderr}.
"""
import contextlib
import io
import json
import sys

from awscli.clidriver import create_clidriver


def run(argv: list[str]) -> dict[str, object]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = create_clidriver().main(argv)
        except SystemExit as exit_:  # argument errors exit, as they do from the shell
            status = exit_.code
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    results = [run(argv) for argv in json.load(sys.stdin)]
    sys.__stdout__.write(json.dumps(results))
