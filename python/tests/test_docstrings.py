# SPDX-License-Identifier: Apache-2.0
"""Every public name of the package has a docstring (docs/python.md): each
name in blobtable.__all__, and each public method and property of its
classes."""

from __future__ import annotations

import inspect

import blobtable


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in blobtable.__all__:
        obj = getattr(blobtable, name)
        if name == "__version__":
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not (callable(member) or isinstance(member, property)):
                    continue
                if not inspect.getdoc(getattr(obj, attr)):
                    missing.append(f"{name}.{attr}")
    assert missing == []
