#!/usr/bin/env python3
"""docs/cookbook.md with every shown output as the tool prints it today.

Each code block of the cookbook that starts with a `$ tracegate ...` line
is a session: its commands are run again (in a folder where the corpus's
trace folders and examples/ sit side by side, so the paths read as the
cookbook writes them), and the block is rewritten with what they print
(standard output and error) and `$ echo $?` with the exit status. The
cookbook's conventions are kept: a `reproduce:` line is cut to 142
characters and `…` (the tool prints it whole), the built-in rule files'
paths read rules.d/..., and /tmp/ stands for a scratch folder. Everything
else of the file is copied as it is. Writes the markdown to stdout, or
with --write over docs/cookbook.md (a redirection onto the file would
empty it before it is read):

    tools/cookbook-doc.py [--write] build/tracegate [TRACES_DIR]

tests/cookbook_test.sh checks that docs/cookbook.md is exactly this output.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPRODUCE_CUT = 142


def session(commands, env, cwd, scratch, root):
    """The lines a block shows for its commands, run one after the other."""
    out = []
    status = 0
    for cmd in commands:
        if cmd == "echo $?":
            out += ["$ echo $?", str(status)]
            continue
        run = cmd.replace("/tmp/", scratch + "/")
        p = subprocess.run(["bash", "-c", run], cwd=cwd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        status = p.returncode
        text = p.stdout.decode("utf-8", "replace").replace(scratch + "/", "/tmp/")
        text = re.sub(r"[^\s()]*/rules\.d/", "rules.d/", text.replace(root + "/", ""))
        out.append("$ " + cmd)
        for line in text.splitlines():
            m = re.match(r"^(\s*reproduce: )(.*)$", line)
            if m and len(m.group(2)) > REPRODUCE_CUT:
                line = m.group(1) + m.group(2)[:REPRODUCE_CUT].rstrip() + " …"
            out.append(line)
    return out


def main():
    args = sys.argv[1:]
    write = args[:1] == ["--write"]
    if write:
        args = args[1:]
    if not args:
        sys.exit("usage: tools/cookbook-doc.py [--write] TRACEGATE [TRACES_DIR]")
    binary = os.path.abspath(args[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    traces = os.path.abspath(args[1] if len(args) > 1 else os.path.join(root, "..", "shared", "traces"))
    path = os.path.join(root, "docs", "cookbook.md")
    doc = open(path, encoding="utf-8").read().split("\n")
    work = tempfile.mkdtemp(prefix="tg-cookbook-")
    try:
        cwd = os.path.join(work, "run")
        scratch = os.path.join(work, "tmp")
        bindir = os.path.join(work, "bin")
        for d in (cwd, scratch, bindir):
            os.mkdir(d)
        os.symlink(binary, os.path.join(bindir, "tracegate"))
        os.symlink(os.path.join(root, "examples"), os.path.join(cwd, "examples"))
        for name in os.listdir(traces):
            if os.path.isdir(os.path.join(traces, name)):
                os.symlink(os.path.join(traces, name), os.path.join(cwd, name))
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), NO_COLOR="1")
        for var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "CLICOLOR_FORCE"):
            env.pop(var, None)
        out, i = [], 0
        while i < len(doc):
            line = doc[i]
            if line == "```" and i + 1 < len(doc) and doc[i + 1].startswith("$ tracegate "):
                end = doc.index("```", i + 1)
                commands = [l[2:] for l in doc[i + 1:end] if l.startswith("$ ")]
                out += ["```"] + session(commands, env, cwd, scratch, root) + ["```"]
                i = end + 1
                continue
            out.append(line)
            i += 1
        text = "\n".join(out)
        if write:
            with open(path + ".new", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".new", path)
        else:
            sys.stdout.write(text)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
