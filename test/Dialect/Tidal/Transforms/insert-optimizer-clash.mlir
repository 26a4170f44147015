// Optimizer state is named <param>.momentum_buffer (or .exp_avg, .exp_avg_sq,
// optimizer.step); a graph value that already has the name is reported
// rather than shadowed.
// RUN: tidal-opt %s -tidal-insert-optimizer=momentum=0.9 -verify-diagnostics -o /dev/null

// expected-error @+1 {{optimizer state 'w.momentum_buffer' clashes with a graph value of that name}}
func.func @train_step(%g: tensor<3xf32>, %w: tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                      %b: tensor<3xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role input>})
    -> (tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role gradient>}) {
  return %g : tensor<3xf32>
}
