"""Runs AWS CLI commands in one process, each as `aws` itself runs it (awscli.clidriver's driver: the same
parsing, request and output formatting), so a test pays the CLI's start-up once rather than per command.
One driver serves them all, as it would a long session: measured here, a new driver per command costs
about 1.5 s (it reloads the service models), the same driver about 0.15 s.

Input (stdin): a JSON list of argument lists. Output (stdout): a JSON list of {status, stdout, stderr}.
"""
import contextlib
import io
import json
import sys

from awscli.clidriver import create_clidriver


def run(driver, argv: list[str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = driver.main(argv)
        except SystemExit as exit_:  # argument errors exit, as they do from the shell
            status = exit_.code
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    driver = create_clidriver()
    results = [run(driver, argv) for argv in json.load(sys.stdin)]
    sys.__stdout__.write(json.dumps(results))
