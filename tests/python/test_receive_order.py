"""Receive-order channels from Python (docs/federate-api.md, "Receive-order channels")."""

import os
import shutil
import tempfile
import unittest

import fleetsim

FEDERATION = """<federation until="100ms">
  <node name="talker" program="talker.py"><input name="back"/><output name="state"/>
    <output name="chat"/></node>
  <node name="listener" program="listener.py"><input name="state"/><input name="chat"/>
    <output name="back"/></node>
  <flow name="state" from="talker.state" to="listener.state" period="10ms"/>
  <flow name="back" from="listener.back" to="talker.back" period="10ms"/>
  <flow name="chat" from="talker.chat" to="listener.chat" kind="receive-order"/>
</federation>
"""


class ReceiveOrder(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-py-")
        self.path = os.path.join(self.dir, "chat.xml")
        with open(self.path, "w") as f:
            f.write(FEDERATION)
        self.fed = fleetsim.Federate(self.path, "listener", ipc_dir=self.dir, quiet=True,
                                     transport="shm")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_arrived_returns_what_has_arrived_without_waiting(self):
        # The talker has not even started: nothing has arrived, and asking does not wait.
        self.assertEqual(self.fed.arrived("chat"), [])

    def test_misuse_names_the_node_and_the_flow(self):
        with self.assertRaises(fleetsim.FederateError) as e:
            self.fed.arrived("state")
        self.assertIn("node 'listener': arrived(\"state\"): flow 'state' is not a receive-order "
                      "flow", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            self.fed.send_receive_order("back", b"x")
        self.assertIn("flow 'back' is not a receive-order flow", str(e.exception))


if __name__ == "__main__":
    unittest.main()
