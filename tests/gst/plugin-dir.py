#!/usr/bin/env python3
"""Make the directory of system plugins that the element tests may load.

usage: plugin-dir.py DIR SYSTEM_PLUGINS_DIR STAMP NAME...

DIR is emptied and gets one symbolic link per plugin NAME (libgstNAME.so in
SYSTEM_PLUGINS_DIR), then STAMP is written.  The tests point
GST_PLUGIN_SYSTEM_PATH at DIR, so that whatever else the machine has
installed (plugins-bad, -ugly, -libav, a user's own plugins) is never loaded
into a test process: a plugin that does not build cleanly under a sanitizer,
or that starts threads of its own when loaded, cannot fail our tests.
Fails, naming the package, if a plugin is missing.
"""
import os
import shutil
import sys

# Which Debian package ships each plugin the tests use.
PACKAGES = {
    "coreelements": "libgstreamer1.0-0",
    "coretracers": "libgstreamer1.0-0",
    "videotestsrc": "gstreamer1.0-plugins-base",
    "audiotestsrc": "gstreamer1.0-plugins-base",
    "app": "gstreamer1.0-plugins-base",
    "audioconvert": "gstreamer1.0-plugins-base",
    "jpeg": "gstreamer1.0-plugins-good",
    "multifile": "gstreamer1.0-plugins-good",
}


def main(argv):
    out, system_dir, stamp, names = argv[0], argv[1], argv[2], argv[3:]
    if os.path.isdir(out) and not os.path.islink(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name in names:
        lib = f"libgst{name}.so"
        target = os.path.join(system_dir, lib)
        if not os.path.exists(target):
            pkg = PACKAGES.get(name, "the package that ships it")
            print(f"plugin-dir: {target} not found: install {pkg}",
                  file=sys.stderr)
            return 1
        os.symlink(target, os.path.join(out, lib))
    with open(stamp, "w", encoding="utf-8") as f:
        f.write("\n".join(names) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
