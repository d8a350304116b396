"""Regions from Python (docs/federate-api.md, "Regions")."""

import os
import shutil
import tempfile
import unittest

import fleetsim

FEDERATION = """<federation until="100ms">
  <dimension name="x" lower="-10" upper="10"/>
  <node name="radar" program="radar.py"><input name="back"/><output name="contacts"/></node>
  <node name="north" program="north.py"><input name="contacts"/><output name="back"/></node>
  <flow name="contacts" from="radar.contacts" to="north.contacts" period="10ms" dimensions="x"/>
  <flow name="back" from="north.back" to="radar.back" period="10ms"/>
</federation>
"""


class Regions(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-py-")
        self.path = os.path.join(self.dir, "radar.xml")
        with open(self.path, "w") as f:
            f.write(FEDERATION)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_regions_are_checked_against_the_flow_and_its_dimensions(self):
        radar = fleetsim.Federate(self.path, "radar", ipc_dir=self.dir, quiet=True,
                                  transport="shm")
        radar.set_update_region("contacts", {"x": (1.0, 2.0)})
        with self.assertRaises(fleetsim.FederateError) as e:
            radar.set_update_region("contacts", {"y": (1.0, 2.0)})
        self.assertIn("node 'radar', flow 'contacts': set_update_region(\"contacts\"): "
                      "dimension 'y' is not one of the flow's (x)", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            radar.set_update_region("contacts", {"x": (0.0, 11.0)})
        self.assertIn("within the dimension's range [-10, 10]", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            radar.subscribe_region("back", None, 0)
        self.assertIn("flow 'back': subscribe_region(\"back\"): the flow has no regions",
                      str(e.exception))


if __name__ == "__main__":
    unittest.main()
