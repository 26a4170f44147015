// Binding arguments from .npy files, result files and the manifest.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[1, -2], [3, -4]], np.float32)); np.save('%t/n.npy', np.array([2, 0], np.int64))"
// RUN: tidal-eval %s --arg x=%t/x.npy --arg %%1=%t/n.npy --output-dir %t/out --print | FileCheck %s --check-prefix=PRINT
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/out/manifest.json
// RUN: %python -c "import numpy as np; a = np.load('%t/out/result_0.npy'); m = np.load('%t/out/result_1.npy'); s = np.load('%t/out/result_2.npy'); print(a.dtype, a.shape, a.tolist(), m.dtype, m.tolist(), s.dtype, s.tolist())" | FileCheck %s --check-prefix=NPY

// PRINT: result 0 "y": tensor<2x2xf32> = [1, 0, 3, 0]
// PRINT: result 1 "mask": tensor<2x2xi1> = [true, true, true, true]
// PRINT: result 2: tensor<2xi64> = [3, 1]

// MANIFEST:      "function": "train_step"
// MANIFEST:      "dtype": "float32"
// MANIFEST-NEXT: "file": "result_0.npy"
// MANIFEST-NEXT: "index": 0
// MANIFEST-NEXT: "name": "y"
// MANIFEST-NEXT: "role": "output"
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT:   2,
// MANIFEST-NEXT:   2
// MANIFEST:      "dtype": "bool"
// MANIFEST-NEXT: "file": "result_1.npy"
// MANIFEST-NEXT: "index": 1
// MANIFEST-NEXT: "name": "mask"
// MANIFEST-NEXT: "role": "state"
// MANIFEST:      "dtype": "int64"
// MANIFEST-NEXT: "file": "result_2.npy"
// MANIFEST-NEXT: "index": 2
// MANIFEST-NEXT: "name": null
// MANIFEST-NEXT: "role": null

// NPY: float32 (2, 2) {{\[\[}}1.0, 0.0], [3.0, 0.0]] bool {{\[\[}}True, True], [True, True]] int64 [3, 1]

func.func @helper(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}

func.func @train_step(%x: tensor<2x2xf32> {tidal.name = "x", tidal.role = #tidal<role input>}, %n: tensor<2xi64>)
    -> (tensor<2x2xf32> {tidal.name = "y", tidal.role = #tidal<role output>},
        tensor<2x2xi1> {tidal.name = "mask", tidal.role = #tidal<role state>},
        tensor<2xi64>) {
  %0 = tidal.relu %x : tensor<2x2xf32>
  %1, %2 = tidal.dropout %0 {ratio = 0.0 : f32, training = true} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xi1>)
  %one = tidal.constant dense<1> : tensor<i64>
  %3 = tidal.add %n, %one : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xi1>, tensor<2xi64>
}
