// The DEECo playground's visualization configuration (its root <visualization>, read by its
// VisualizationInitializer) as a fleetsim view configuration (docs/view-format.md, "The DEECo
// playground's visualization configuration"): `fleetsim view LOG --config config.xml` takes
// either. The playground's file becomes a derived <view> file whose nodes keep the lines of
// the file the user wrote, so that the view configuration's own checks report there.
#pragma once

#include <memory>

#include "core/diagnostics.hpp"
#include "core/xml_reader.hpp"

namespace fleetsim::view {

/// `file`'s root is <visualization>: the same configuration as a <view> document. Problems
/// only the playground's file can have (a Java layer, an unknown element) are reported to
/// `diags` at their line.
std::unique_ptr<XmlFile> playground_visualization_as_view(const XmlFile& file, Diagnostics& diags);

}  // namespace fleetsim::view
