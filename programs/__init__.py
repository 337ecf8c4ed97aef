"""How the arena runs a bot's own program: in a sandbox, as a child process, spoken to in JSON lines.

    sandbox     bubblewrap + a seccomp filter + a cgroup per run: what a program may see, do and use
    seccomp     the system calls a sandboxed program is refused
    cgroups     the run cgroups: memory, CPU and process limits, and their sweep
    child       a program as a child process: start, write a line, read one within a deadline, stop
    bridge      a JSON-lines program as a :class:`bots.base.Bot` (the protocol of docs/jsonlines.md)

Hosted versions (:mod:`hosting`), ``tablanette match`` and ``tablanette bot bridge``
run programs through it. It sits below the scheduler (which plays local matches between programs) and
above the bots (a bridged program is a :class:`~bots.base.Bot`); nothing of it is lent to a hosted
bot's sandbox.
"""
