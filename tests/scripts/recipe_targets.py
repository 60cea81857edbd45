#!/usr/bin/env python3
"""Reads an llm-compressor recipe as llm-compressor does and says which entries select each module.

  recipe_targets.py RECIPE MODULES_JSON

The recipe is parsed with PyYAML (safe_load). A target or ignore entry selects a module as
compressed-tensors' matcher does: "re:PATTERN" when re.match(PATTERN, name) matches, else when the
entry equals the module's name or the name of a class in the module's MRO; every module here is taken
to be an nn.Linear (class names Linear, Module). Prints JSON: {"top": [top-level keys], "modules":
{name: [entries selecting it: "ignore" or the config group's name]}, "groups": {group: weights}}.
"""
import json
import re
import sys

import yaml

CLASSES = ("Linear", "Module")


def selects(entry, name):
    if entry.startswith("re:"):
        return re.match(entry[3:], name) is not None
    return entry == name or entry in CLASSES


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        recipe = yaml.safe_load(f)
    modules = json.loads(sys.argv[2])
    modifier = recipe["quant_stage"]["quant_modifiers"]["QuantizationModifier"]
    groups = modifier.get("config_groups") or {}
    out = {"top": sorted(recipe), "modules": {}, "groups": {g: v["weights"] for g, v in groups.items()}}
    for name in modules:
        hits = ["ignore" for e in modifier.get("ignore", []) if selects(e, name)]
        hits += [g for g, v in groups.items() for e in v["targets"] if selects(e, name)]
        out["modules"][name] = hits
    print(json.dumps(out))


if __name__ == "__main__":
    main()
