// network_from_json (network.h) over a document the strict reader has parsed: every missing key,
// wrong type or bad value is an error naming where it is (the field's source and JSON pointer),
// in the code the field was made with. The engine layer reads a plan's network with it.
//
//   const JsonField plan(doc, "engine 'e.engine', plan");
//   TO_ASSIGN_OR_RETURN(const JsonField network, plan.member("network"));
//   TO_ASSIGN_OR_RETURN(Network net, graph::network_from_json_field(network, resolver));
#pragma once

#include "io/json_field.h"
#include "tensoracle/network.h"

namespace tensoracle::graph {

Result<Network> network_from_json_field(const JsonField& network, const ConstantResolver& constants);

}  // namespace tensoracle::graph
