"""Typed flows from Python (docs/python.md, "Typed data"): a federate encodes and decodes
classes by attribute name, and misuse raises FederateError naming the node, the flow and the
timestamp. Run by ctest with PYTHONPATH=<build>/python."""
import os
import shutil
import struct
import subprocess
import tempfile
import types
import unittest

import fleetsim

FEDERATION = """<federation until="100ms" seed="3">
  <class name="State">
    <attribute name="x" type="f64"/><attribute name="v" type="f32"/>
    <attribute name="id" type="u64"/><attribute name="level" type="i32"/>
    <attribute name="ok" type="bool"/>
  </class>
  <interaction name="Push"><attribute name="force" type="f64"/></interaction>
  <node name="dynamics" program="federate.py">
    <input name="force" class="Push"/>
    <input name="raw"/>
    <output name="state" class="State"/>
  </node>
  <node name="controller">
    <input name="state" class="State"/>
    <output name="force" class="Push"/>
    <output name="raw"/>
  </node>
  <flow name="state" from="dynamics.state" to="controller.state" period="1ms">
    <noise attribute="x" sigma="0.1"/>
  </flow>
  <flow name="force" from="controller.force" to="dynamics.force" period="10ms"/>
  <flow name="raw" from="controller.raw" to="dynamics.raw" period="10ms"/>
</federation>
"""


class TypedFlows(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-py-")
        self.path = os.path.join(self.dir, "typed.xml")
        with open(self.path, "w") as f:
            f.write(FEDERATION)
        self.fed = fleetsim.Federate(self.path, "dynamics", ipc_dir=self.dir, quiet=True,
                                     transport="shm")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_values_are_encoded_and_decoded_by_attribute_name(self):
        fed = self.fed
        self.assertEqual(fed.data_class("state"), {
            "name": "State", "interaction": False, "size": 25,
            "attributes": [("x", "f64"), ("v", "f32"), ("id", "u64"), ("level", "i32"),
                           ("ok", "bool")]})
        self.assertIsNone(fed.data_class("raw"))
        payload = fed.encode("state", {"x": 1.5, "v": 0.25, "id": 2**64 - 1, "level": -7,
                                       "ok": True})
        # Little-endian, in declaration order, no padding.
        self.assertEqual(payload, struct.pack("<dfQi?", 1.5, 0.25, 2**64 - 1, -7, True))
        self.assertEqual(fed.encode("state", {}), bytes(25))  # unset attributes are 0
        fed.update("state", {"x": 2.0})  # a dict on a typed output
        fed.update("state", payload)     # or its bytes
        message = types.SimpleNamespace(input="force", flow="force", timestamp=10_000_000,
                                        payload=struct.pack("<d", -3.5))
        self.assertEqual(fed.decode(message), {"force": -3.5})

    def test_misuse_names_the_node_the_flow_and_the_timestamp(self):
        fed = self.fed
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.encode("state", {"xx": 1.0})
        self.assertIn("node 'dynamics', flow 'state' at 0 ns: class 'State' has no attribute "
                      "'xx'", str(e.exception))
        self.assertIn("did you mean 'x'", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.encode("state", {"level": 2**31})
        self.assertIn("does not fit attribute 'level' of class 'State' (i32)", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.update("state", bytes(8))
        self.assertIn("node 'dynamics', flow 'state' at 0 ns: a payload of 8 bytes is not a "
                      "value of class 'State' (25 bytes: 5 attributes)", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.decode(types.SimpleNamespace(input="force", flow="force", timestamp=20_000_000,
                                             payload=b"abc"))
        self.assertIn("node 'dynamics', flow 'force' at 20000000 ns: a payload of 3 bytes",
                      str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.decode(types.SimpleNamespace(input="raw", flow="raw", timestamp=0, payload=b""))
        self.assertIn("flow 'raw' at 0 ns: the flow is untyped", str(e.exception))
        with self.assertRaises(TypeError):
            fed.encode("state", {"x": "one"})


class TypedSpring(unittest.TestCase):
    def test_a_python_typed_federate_gives_the_built_in_nodes_traces(self):
        """examples/python/typed_spring.xml: the dynamics in Python, reading and writing dicts,
        through the flows' noise and down-sampling, gives the built-in federation's traces."""
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
        fleetsim_bin = os.environ["FLEETSIM_BIN"]
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            subprocess.run([fleetsim_bin, "launch",
                            os.path.join(root, "federations", "typed_sensors.xml"),
                            "--quiet", "--trace", os.path.join(d, "ref")], check=True)
            out = subprocess.run([fleetsim_bin, "launch",
                                  os.path.join(root, "python", "typed_spring.xml"),
                                  "--transport", "zmq", "--jitter-us", "200", "--quiet",
                                  "--trace", os.path.join(d, "py")],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("typed spring: x = ", out.stderr)
            for node in ("dynamics", "controller", "camera"):
                with open(os.path.join(d, "ref", node + ".trace"), "rb") as a, \
                        open(os.path.join(d, "py", node + ".trace"), "rb") as b:
                    ref = a.read()
                    self.assertGreater(len(ref), 1000)
                    self.assertEqual(ref, b.read(), f"{node}'s trace differs")


if __name__ == "__main__":
    unittest.main()
