#!/usr/bin/python3
"""RIHS01 type hashes computed from ROS 2 .msg files, independently of fleetsim's bridge.

The algorithm is REP-2011's, as rosidl_generator_type_description publishes it: each .msg
becomes a type description (type_description_interfaces/Field: type_id, capacity,
string_capacity, nested_type_name; a .msg's `char` is IDL uint8, `float64` double, ...),
the type and every type it refers to (sorted by name) are dumped as JSON with
json.dumps(separators=(', ', ': ')), default values left out, and hashed with SHA-256.

Usage: type_hash.py MSG_DIR [pkg/msg/Name ...]   prints "pkg/msg/Name RIHS01_..." per line
(every .msg under MSG_DIR/pkg/msg/ when no names are given).
"""
import hashlib
import json
import os
import re
import sys

PRIMITIVE_IDS = {
    'int8': 2, 'uint8': 3, 'char': 3, 'byte': 16, 'bool': 15,
    'int16': 4, 'uint16': 5, 'int32': 6, 'uint32': 7, 'int64': 8, 'uint64': 9,
    'float32': 10, 'float64': 11, 'string': 17, 'wstring': 18,
}
BOUNDED_STRING = {'string': 21, 'wstring': 22}
ARRAY, BOUNDED_SEQUENCE, SEQUENCE = 48, 96, 144


def parse_msg(root, package, name):
    """The individual type description of root/package/msg/name.msg."""
    fields = []
    with open(os.path.join(root, package, 'msg', name + '.msg')) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line or '=' in line.split()[1 if len(line.split()) > 1 else 0]:
                continue  # blank, or a constant (not part of the description)
            parts = line.split()
            ftype, fname = parts[0], parts[1]
            m = re.fullmatch(r'([\w/]+?)(?:<=(\d+))?(\[(<=)?(\d*)\])?', ftype)
            base, string_bound, array, bounded, size = m.groups()
            capacity = 0
            offset = 0
            if array is not None:
                if size == '':
                    offset = SEQUENCE
                elif bounded:
                    offset, capacity = BOUNDED_SEQUENCE, int(size)
                else:
                    offset, capacity = ARRAY, int(size)
            nested = ''
            string_capacity = 0
            if base in PRIMITIVE_IDS:
                type_id = PRIMITIVE_IDS[base]
                if string_bound is not None:
                    type_id, string_capacity = BOUNDED_STRING[base], int(string_bound)
            else:
                pkg, _, typ = base.rpartition('/')
                nested = '%s/msg/%s' % (pkg or package, typ)
                type_id = 1
            fields.append({
                'name': fname,
                'type': {'type_id': type_id + offset, 'capacity': capacity,
                         'string_capacity': string_capacity, 'nested_type_name': nested},
            })
    if not fields:  # as rosidl does for a message without fields
        fields.append({'name': 'structure_needs_at_least_one_member',
                       'type': {'type_id': 3, 'capacity': 0, 'string_capacity': 0,
                                'nested_type_name': ''}})
    return {'type_name': '%s/msg/%s' % (package, name), 'fields': fields}


def type_hash(root, type_name):
    def load(full):
        package, _, name = full.split('/')
        return parse_msg(root, package, name)

    top = load(type_name)
    referenced = {}
    queue = [f['type']['nested_type_name'] for f in top['fields']]
    while queue:
        n = queue.pop()
        if n and n not in referenced:
            referenced[n] = load(n)
            queue.extend(f['type']['nested_type_name'] for f in referenced[n]['fields'])
    description = {
        'type_description': top,
        'referenced_type_descriptions': [referenced[n] for n in sorted(referenced)],
    }
    text = json.dumps(description, skipkeys=False, ensure_ascii=True, check_circular=True,
                      allow_nan=False, indent=None, separators=(', ', ': '), sort_keys=False)
    return 'RIHS01_' + hashlib.sha256(text.encode('utf-8')).hexdigest()


def main():
    root = sys.argv[1]
    names = sys.argv[2:]
    if not names:
        for package in sorted(os.listdir(root)):
            for f in sorted(os.listdir(os.path.join(root, package, 'msg'))):
                names.append('%s/msg/%s' % (package, f[:-4]))
    for n in names:
        print(n, type_hash(root, n))


if __name__ == '__main__':
    main()
