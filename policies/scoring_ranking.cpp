// Ranking: the metrics of one scope's queries (ndcg@k, mrr, precision@k, ties averaged over
// their orders) and the parity of two rankings (top-k overlap, Kendall's tau-b). Definitions in
// scoring.hpp.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "policies/scoring_detail.hpp"

namespace reverify::scoring::detail {
namespace {

struct Query {
  std::uint32_t code = 0;
  std::span<const std::uint32_t> records;
};

std::vector<Query> queries_of(std::span<const std::uint32_t> records, const RecordKeys& queries,
                              std::vector<std::uint32_t>& storage) {
  std::vector<std::size_t> start(queries.values.size() + 1);
  for (std::uint32_t i : records)
    ++start[queries.codes[i] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  storage.resize(records.size());
  std::vector<std::size_t> next(start.begin(), start.end() - 1);
  for (std::uint32_t i : records)
    storage[next[queries.codes[i]]++] = i;
  std::vector<Query> out;
  for (std::uint32_t code = 0; code + 1 < start.size(); ++code) {
    if (start[code + 1] > start[code])
      out.push_back({code, std::span<const std::uint32_t>(storage).subspan(
                               start[code], start[code + 1] - start[code])});
  }
  return out;
}

// scikit-learn's discount, 1 / (ln(rank + 1) / ln 2), for 0-based position i (rank i + 1).
double discount(std::size_t i) {
  return 1 / (std::log(static_cast<double>(i) + 2) / std::log(2.0));
}

// A query's records by score, highest first (eval-set order among ties), and its tie groups.
struct Ranking {
  std::vector<std::uint32_t> order;
  std::vector<std::size_t> group_start;  // each tie group's first position, then order.size()
};

Ranking rank_query(std::span<const double> scores, std::span<const std::uint32_t> records) {
  Ranking r;
  r.order.assign(records.begin(), records.end());
  std::stable_sort(r.order.begin(), r.order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return scores[a] > scores[b]; });
  for (std::size_t i = 0; i < r.order.size(); ++i) {
    if (i == 0 || scores[r.order[i]] != scores[r.order[i - 1]])
      r.group_start.push_back(i);
  }
  r.group_start.push_back(r.order.size());
  return r;
}

struct QueryMetrics {
  double ndcg = 0, reciprocal_rank = 0, relevant_in_top = 0, slots = 0;
};

QueryMetrics query_metrics(const ScoringInputs& in, std::span<const double> scores,
                           std::span<const std::uint32_t> records) {
  const Ranking r = rank_query(scores, records);
  const std::size_t n = r.order.size(), cut = std::min(in.k, n);
  QueryMetrics q;
  q.slots = static_cast<double>(cut);
  double dcg = 0;
  bool found_relevant = false;
  for (std::size_t g = 0; g + 1 < r.group_start.size(); ++g) {
    const std::size_t first = r.group_start[g], end = r.group_start[g + 1];
    const double size = static_cast<double>(end - first);
    double gain = 0, relevant = 0, discounts = 0;
    for (std::size_t i = first; i < end; ++i) {
      gain += in.labels[r.order[i]];
      relevant += in.labels[r.order[i]] > 0 ? 1 : 0;
      if (i < cut)
        discounts += discount(i);
    }
    dcg += gain / size * discounts;
    if (first < cut)
      q.relevant_in_top += relevant * static_cast<double>(std::min(end, cut) - first) / size;
    if (!found_relevant && relevant > 0) {
      // The expected 1 / rank of the group's first relevant record over the group's orders:
      // it is at the group's j-th place with probability C(size - j, relevant - 1) /
      // C(size, relevant).
      found_relevant = true;
      double chance = relevant / size;
      for (double j = 1; j <= size - relevant + 1; ++j) {
        q.reciprocal_rank += chance / (static_cast<double>(first) + j);
        if (j < size - relevant + 1)
          chance *= (size - j - relevant + 1) / (size - j);
      }
    }
  }
  std::vector<double> ideal;
  for (std::uint32_t i : records)
    ideal.push_back(in.labels[i]);
  std::sort(ideal.begin(), ideal.end(), std::greater<>());
  double ideal_dcg = 0;
  for (std::size_t i = 0; i < cut; ++i)
    ideal_dcg += ideal[i] * discount(i);
  q.ndcg = dcg / ideal_dcg;
  return q;
}

// Kendall's tau-b of two score lists as scipy.stats.kendalltau computes it (Knight's
// O(n log n) algorithm: sort by (x, y), count the inversions left in y by a merge sort); nullopt
// when either list is constant.
std::optional<double> kendall_tau_b(std::vector<std::pair<double, double>> xy) {
  const auto n = static_cast<std::int64_t>(xy.size());
  std::sort(xy.begin(), xy.end());
  auto tied_pairs = [](std::int64_t run) { return run * (run - 1) / 2; };
  std::int64_t x_ties = 0, joint_ties = 0;
  for (std::int64_t i = 0, x_run = 1, joint_run = 1; i < n; ++i) {
    const bool last = i + 1 == n;
    const bool same_x = !last && xy[i + 1].first == xy[i].first;
    const bool same_both = same_x && xy[i + 1].second == xy[i].second;
    if (same_both) {
      ++joint_run;
    } else {
      joint_ties += tied_pairs(joint_run);
      joint_run = 1;
    }
    if (same_x) {
      ++x_run;
    } else {
      x_ties += tied_pairs(x_run);
      x_run = 1;
    }
  }
  std::vector<double> y(xy.size()), buffer(xy.size());
  for (std::size_t i = 0; i < xy.size(); ++i)
    y[i] = xy[i].second;
  std::int64_t discordant = 0;
  for (std::size_t width = 1; width < y.size(); width *= 2) {
    for (std::size_t lo = 0; lo < y.size(); lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, y.size()),
                        hi = std::min(lo + 2 * width, y.size());
      std::size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (y[j] < y[i]) {
          discordant += static_cast<std::int64_t>(mid - i);
          buffer[k++] = y[j++];
        } else {
          buffer[k++] = y[i++];
        }
      }
      while (i < mid)
        buffer[k++] = y[i++];
      while (j < hi)
        buffer[k++] = y[j++];
    }
    y.swap(buffer);
  }
  std::int64_t y_ties = 0;
  for (std::int64_t i = 0, run = 1; i < n; ++i) {
    if (i + 1 < n && y[i + 1] == y[i]) {
      ++run;
    } else {
      y_ties += tied_pairs(run);
      run = 1;
    }
  }
  const std::int64_t total = tied_pairs(n);
  if (x_ties == total || y_ties == total)
    return std::nullopt;
  const auto concordant_minus_discordant =
      static_cast<double>(total - x_ties - y_ties + joint_ties - 2 * discordant);
  const double tau = concordant_minus_discordant / std::sqrt(static_cast<double>(total - x_ties)) /
                     std::sqrt(static_cast<double>(total - y_ties));
  return std::clamp(tau, -1.0, 1.0);
}

// The top min(k, n) records of a query, in rank order: by score descending, then eval-set order.
std::vector<std::uint32_t> top_k(std::span<const double> scores,
                                 std::span<const std::uint32_t> records, std::size_t k) {
  std::vector<std::uint32_t> order(records.begin(), records.end());
  const std::size_t cut = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(cut), order.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
                    });
  order.resize(cut);
  return order;
}

}  // namespace

void score_ranking(const ScoringInputs& in, std::span<const double> scores, const Scope& scope,
                   ScopeScores& out) {
  std::vector<std::uint32_t> storage;
  QueryCounts counts;
  double ndcg = 0, reciprocal_rank = 0, relevant_in_top = 0, slots = 0;
  for (const Query& query : queries_of(scope.records, *in.queries, storage)) {
    if (query.records.size() < 2) {
      ++counts.one_record;
      continue;
    }
    if (std::none_of(query.records.begin(), query.records.end(),
                     [&](std::uint32_t i) { return in.labels[i] > 0; })) {
      ++counts.no_relevant;
      continue;
    }
    ++counts.judged;
    const QueryMetrics q = query_metrics(in, scores, query.records);
    ndcg += q.ndcg;
    reciprocal_rank += q.reciprocal_rank;
    relevant_in_top += q.relevant_in_top;
    slots += q.slots;
  }
  out.queries = counts;
  const double judged = static_cast<double>(counts.judged);
  for (ScoringMetric metric : in.metrics) {
    const std::size_t k = metric_name_at(metric, in.k) ? in.k : 0;
    if (counts.judged == 0) {
      out.metrics.push_back(
          not_judged(metric, "no query to judge: " + std::to_string(counts.one_record) +
                                 " of one record, " + std::to_string(counts.no_relevant) +
                                 " without a relevant record (label > 0)"));
      out.metrics.back().k = k;
      continue;
    }
    MetricScore m;
    m.metric = metric;
    m.name = to_string(metric);
    m.k = k;
    if (metric == ScoringMetric::ndcg_at_k || metric == ScoringMetric::mrr) {
      m.value = (metric == ScoringMetric::mrr ? reciprocal_rank : ndcg) / judged;
      m.step = 1 / judged;
    } else {
      m.value = relevant_in_top / slots;
      m.count = Count{relevant_in_top, slots};
      m.step = 1 / slots;
    }
    out.metrics.push_back(std::move(m));
  }
}

RankingParity ranking_parity(const ScoringInputs& in, std::span<const double> release,
                             std::span<const double> other, const Scope& scope,
                             std::vector<QueryParity>* queries) {
  std::vector<std::uint32_t> storage;
  RankingParity out;
  out.k = in.k;
  double overlap_sum = 0, tau_sum = 0;
  for (const Query& query : queries_of(scope.records, *in.queries, storage)) {
    if (query.records.size() < 2)
      continue;
    std::vector<std::uint32_t> a = top_k(release, query.records, in.k);
    std::vector<std::uint32_t> b = top_k(other, query.records, in.k);
    QueryParity q;
    q.top_k_order_changed = a != b;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<std::uint32_t> shared;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(shared));
    q.query = in.queries->values[query.code];
    q.records = query.records.size();
    q.overlap = static_cast<double>(shared.size()) / static_cast<double>(a.size());
    q.top_k_changed = shared.size() < a.size();
    std::vector<std::pair<double, double>> xy;
    xy.reserve(query.records.size());
    for (std::uint32_t i : query.records)
      xy.emplace_back(release[i], other[i]);
    q.tau = kendall_tau_b(std::move(xy));
    ++out.queries;
    out.top_k_changed += q.top_k_changed ? 1 : 0;
    out.top_k_order_changed += q.top_k_order_changed ? 1 : 0;
    overlap_sum += q.overlap;
    if (q.tau) {
      ++out.tau_queries;
      out.largest_tau_query = std::max(out.largest_tau_query, query.records.size());
      tau_sum += *q.tau;
    }
    if (queries)
      queries->push_back(std::move(q));
  }
  if (out.queries > 0)
    out.mean_overlap = overlap_sum / static_cast<double>(out.queries);
  if (out.tau_queries > 0)
    out.mean_tau = tau_sum / static_cast<double>(out.tau_queries);
  return out;
}

}  // namespace reverify::scoring::detail
