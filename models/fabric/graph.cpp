#include "models/fabric/graph.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include <cmath>
#include <functional>
#include <utility>

namespace clustersim::fabric {
namespace {

struct EdgeLink {
  std::uint32_t link = 0;
};
using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeLink>;

Csr make_csr(const Fabric& f) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<EdgeLink> props;
  edges.reserve(f.links.size());
  props.reserve(f.links.size());
  for (std::uint32_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    if (l.src == l.dst) continue;  // dark dragonfly ports
    edges.emplace_back(l.src.value, l.dst.value);
    props.push_back(EdgeLink{i});
  }
  return Csr(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), props.begin(), f.vertex_kind.size());
}

bool is_switch(VertexKind k) {
  return k == VertexKind::leaf || k == VertexKind::spine || k == VertexKind::core || k == VertexKind::router;
}

// Records, for each vertex reached, the link it was reached by.
struct PredecessorRecorder : boost::default_bfs_visitor {
  std::vector<std::int64_t>* via;
  template <class Edge, class Graph>
  void tree_edge(Edge e, const Graph& g) const {
    (*via)[boost::target(e, g)] = g[e].link;
  }
};

}  // namespace

bool shortest_route(const Fabric& f, VertexId src, VertexId dst, std::vector<LinkId>& out) {
  const Csr g = make_csr(f);
  const auto usable = [&](const boost::graph_traits<Csr>::edge_descriptor& e) {
    const Link& l = f.links[g[e].link];
    if (f.failed(LinkId{g[e].link})) return false;
    return f.vertex_kind[l.dst.value] != VertexKind::gpu || l.dst == dst;
  };
  boost::filtered_graph<Csr, std::function<bool(const boost::graph_traits<Csr>::edge_descriptor&)>> view(g, usable);
  std::vector<std::int64_t> via(f.vertex_kind.size(), -1);
  std::vector<boost::default_color_type> colors(f.vertex_kind.size());
  PredecessorRecorder rec;
  rec.via = &via;
  boost::breadth_first_search(view, src.value,
                              boost::visitor(rec).color_map(boost::make_iterator_property_map(
                                  colors.begin(), boost::get(boost::vertex_index, g))));
  if (src != dst && via[dst.value] < 0) return false;
  std::vector<LinkId> path;
  for (std::uint32_t v = dst.value; v != src.value;) {
    const auto link = static_cast<std::uint32_t>(via[v]);
    path.push_back(LinkId{link});
    v = f.links[link].src.value;
  }
  out.insert(out.end(), path.rbegin(), path.rend());
  return true;
}

std::vector<std::int64_t> switch_distances(const Fabric& f, VertexId src) {
  const Csr g = make_csr(f);
  const auto usable = [&](const boost::graph_traits<Csr>::edge_descriptor& e) {
    const Link& l = f.links[g[e].link];
    return !f.failed(LinkId{g[e].link}) && is_switch(f.vertex_kind[l.src.value]) && is_switch(f.vertex_kind[l.dst.value]);
  };
  boost::filtered_graph<Csr, std::function<bool(const boost::graph_traits<Csr>::edge_descriptor&)>> view(g, usable);
  std::vector<std::int64_t> dist(f.vertex_kind.size(), -1);
  dist[src.value] = 0;
  struct Recorder : boost::default_bfs_visitor {
    std::vector<std::int64_t>* dist;
    void tree_edge(boost::graph_traits<Csr>::edge_descriptor e, const decltype(view)& vg) const {
      (*dist)[boost::target(e, vg)] = (*dist)[boost::source(e, vg)] + 1;
    }
  } rec;
  rec.dist = &dist;
  std::vector<boost::default_color_type> colors(f.vertex_kind.size());
  boost::breadth_first_search(view, src.value,
                              boost::visitor(rec).color_map(boost::make_iterator_property_map(
                                  colors.begin(), boost::get(boost::vertex_index, g))));
  return dist;
}

double max_flow(const Fabric& f, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to) {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, std::int64_t,
                      boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const std::size_t n = f.vertex_kind.size();
  Graph g(n + 2);
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  const auto add = [&](std::size_t u, std::size_t v, std::int64_t c) {
    const auto e = boost::add_edge(u, v, g).first;
    const auto r = boost::add_edge(v, u, g).first;
    capacity[e] = c;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  // Integer bytes/s: push-relabel checks flow conservation exactly, which doubles break.
  // A NIC's only fabric links are its access links, up to its switch and down from it: the
  // source feeds a `from` NIC's switch through its up links, the sink drains a `to` NIC's
  // through its down links, and the NICs stay out of the graph (a dragonfly of 32,768
  // endpoints solved in half the time). Parallel edges from the source or to the sink merge.
  std::vector<std::int64_t> from_source(n, 0);
  std::vector<std::int64_t> to_sink(n, 0);
  std::vector<char> side(n, 0);  // 1: a `from` NIC, 2: a `to` NIC
  for (const std::int64_t e : from) side[f.nic(e).value] = 1;
  for (const std::int64_t e : to) side[f.nic(e).value] = 2;
  for (std::uint32_t i = 0; i < f.links.size(); ++i) {
    const Link& l = f.links[i];
    const VertexKind a = f.vertex_kind[l.src.value];
    const VertexKind b = f.vertex_kind[l.dst.value];
    if (l.src == l.dst || f.failed(LinkId{i})) continue;
    if (a == VertexKind::gpu || b == VertexKind::gpu || a == VertexKind::scaleup || b == VertexKind::scaleup) continue;
    const std::int64_t c = std::llround(l.bandwidth.value());
    if (a == VertexKind::nic) {
      if (side[l.src.value] == 1) from_source[l.dst.value] += c;
    } else if (b == VertexKind::nic) {
      if (side[l.dst.value] == 2) to_sink[l.src.value] += c;
    } else {
      add(l.src.value, l.dst.value, c);
    }
  }
  const std::size_t s = n;
  const std::size_t t = n + 1;
  for (std::size_t v = 0; v < n; ++v) {
    if (from_source[v] > 0) add(s, v, from_source[v]);
    if (to_sink[v] > 0) add(v, t, to_sink[v]);
  }
  return static_cast<double>(boost::push_relabel_max_flow(g, s, t));
}

}  // namespace clustersim::fabric
