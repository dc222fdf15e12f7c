"""Reported numbers of Mukhoti et al. (2020), Tables 1-13, typed as printed.

Source: ``focal-loss-mukhoti-2020.txt``, the text of "The Intriguing Effects of Focal Loss
on the Calibration of Deep Neural Networks" (ICLR 2020 submission; NeurIPS 2020 as
"Calibrating Deep Neural Networks using Focal Loss"). ``lines`` give the 1-based line range
of each table in that file (first data row to the end of the caption). All values are
percent. "Post T" values were printed as ``value(T)`` with the grid-searched optimal
temperature T (grid 0.1..10 step 0.1, cross-validated on validation ECE, or AdaECE for
Tables 2, 5, 8). Tables 11 and 13 are post-T NLL / MCE at the ECE-optimal T of
Tables 1 / 7, which they do not reprint.

Row layout notes: the extraction merged the CIFAR-10 ResNet 110 and Wide ResNet 26-10 rows
of Table 5 into one line with the two rows' numbers interleaved (line 455); they are typed
here as two rows. Method ids: ``flsd53`` = "FLA-53" = "Focal Loss (sample-wise gamma 5,3)",
``flsd532`` = "FLA-532", ``fls531`` / ``fls532`` = scheduled gamma, ``fl1..fl3`` = fixed gamma.
"""
from __future__ import annotations

from . import pre_post_columns

PAPER = {
    "key": "mukhoti2020",
    "citation": "mukhoti2020focal",
    "title": "The Intriguing Effects of Focal Loss on the Calibration of Deep Neural Networks",
    "version": "ICLR 2020 submission (published at NeurIPS 2020 as 'Calibrating Deep Neural Networks using Focal Loss')",
    "source_file": "focal-loss-mukhoti-2020.txt",
    # for replicate.comparison: which tables report each metric (a number printed in
    # several is the same), printed method names that stand for one of ours, and the row
    # compared with a network the paper did not train (same data set, this network)
    "metric_tables": {"ece": ("table1", "table4", "table7"), "adaece": ("table2", "table5", "table8"),
                      "mce": ("table12", "table13"), "nll": ("table10", "table11"), "error": ("table3", "table9"),
                      "s99_fraction": ("table6",), "s99_accuracy": ("table6",)},
    # Table 6 names its focal model only "Focal Loss"; Appendix F and Sec. 6 use FLSD-53
    "method_aliases": {"focal": "flsd53"},
    "closest_model": {"image": "ResNet 50", "text": "Global Pooling CNN"},
}

CE, BRIER, MMCE = ("cross_entropy", "Cross Entropy"), ("brier", "Brier Loss"), ("mmce", "MMCE")
FL1, FL2, FL3 = ("fl1", "FL-1"), ("fl2", "FL-2"), ("fl3", "FL-3")
FLS531, FLS532 = ("fls531", "FLS-531"), ("fls532", "FLS-532")
FLA532, FLA53 = ("flsd532", "FLA-532"), ("flsd53", "FLA-53")
FOCAL_ALL = [FL1, FL2, FL3, FLS531, FLS532, FLA532, FLA53]
ALL10 = [CE, BRIER, MMCE] + FOCAL_ALL


def _single(methods, metric, scaled=False):
    return [(m, lab, metric, scaled) for m, lab in methods]


_S99 = [(m, lab, metric, scaled) for m, lab in (CE, MMCE, ("focal", "Focal Loss"))
        for scaled in (False, True) for metric in ("s99_fraction", "s99_accuracy")]

TABLES = {
    "table1": {
        "number": 1, "metric": "ece", "lines": (363, 374),
        "caption": "ECE (%) computed for different approaches both pre and post temperature scaling "
                   "(cross-validating T on ECE). Optimal temperature for each method is indicated in brackets.",
        "columns": pre_post_columns([CE, BRIER, MMCE, ("flsd53", "Focal Loss (sample-wise γ 5,3)")], "ece"),
        "rows": """
CIFAR-100 | ResNet 50 | 17.52 3.42(2.10) 6.52 3.64(1.10) 15.32 2.38(1.80) 4.50 2.00(1.10)
CIFAR-100 | ResNet 110 | 19.05 4.43(2.30) 7.88 4.65(1.20) 19.14 3.86(2.30) 8.56 4.12(1.20)
CIFAR-100 | Wide ResNet 26-10 | 15.33 2.88(2.20) 4.31 2.70(1.10) 13.17 4.37(1.90) 3.03 1.64(1.10)
CIFAR-100 | DenseNet 121 | 20.98 4.27(2.30) 5.17 2.29(1.10) 19.13 3.06(2.10) 3.73 1.31(1.10)
CIFAR-10 | ResNet 50 | 4.35 1.35(2.50) 1.82 1.08(1.10) 4.56 1.19(2.60) 1.55 0.95(1.10)
CIFAR-10 | ResNet 110 | 4.41 1.09(2.80) 2.56 1.25(1.20) 5.08 1.42(2.80) 1.87 1.07(1.10)
CIFAR-10 | Wide ResNet 26-10 | 3.23 0.92(2.20) 1.25 1.25(1.00) 3.29 0.86(2.20) 1.56 0.84(0.90)
CIFAR-10 | DenseNet 121 | 4.52 1.31(2.40) 1.53 1.53(1.00) 5.10 1.61(2.50) 1.22 1.22(1.00)
20 Newsgroups | Global Pooling CNN | 17.92 2.39(3.40) 13.58 3.22(2.30) 15.48 6.78(2.20) 6.92 2.19(1.50)
SST Binary | Tree LSTM | 7.37 2.62(1.80) 9.01 2.79(2.50) 5.03 4.02(1.50) 9.19 1.83(0.70)
""",
    },
    "table2": {
        "number": 2, "metric": "adaece", "lines": (377, 388),
        "caption": "Adaptive ECE (%) computed for different approaches both pre and post temperature scaling "
                   "(cross-validating T on Adaptive ECE). Optimal temperature for each method is indicated in "
                   "brackets.",
        "columns": pre_post_columns([CE, BRIER, MMCE, ("flsd53", "Focal Loss (sample-wise γ 5,3)")], "adaece"),
        "rows": """
CIFAR-100 | ResNet 50 | 17.52 3.67(2.10) 6.52 3.69(1.20) 15.32 2.44(1.80) 4.39 2.33(1.10)
CIFAR-100 | ResNet 110 | 19.05 5.50(2.40) 7.73 4.53(1.20) 19.14 4.85(2.30) 8.55 3.96(1.20)
CIFAR-100 | Wide ResNet 26-10 | 15.33 2.89(2.20) 4.22 2.81(1.10) 13.16 4.25(1.90) 2.75 1.63(1.10)
CIFAR-100 | DenseNet 121 | 20.98 5.09(2.30) 5.04 2.56(1.10) 19.13 3.07(2.10) 3.55 1.24(1.10)
CIFAR-10 | ResNet 50 | 4.33 2.14(2.50) 1.74 1.23(1.10) 4.55 2.06(2.50) 1.56 1.26(1.10)
CIFAR-10 | ResNet 110 | 4.40 1.84(2.70) 2.60 1.70(1.20) 5.06 2.45(2.70) 2.07 1.67(1.10)
CIFAR-10 | Wide ResNet 26-10 | 3.23 1.69(2.20) 1.70 1.63(0.90) 3.29 1.69(2.10) 1.52 1.38(0.90)
CIFAR-10 | DenseNet 121 | 4.51 2.25(2.30) 2.03 2.18(0.90) 5.10 2.46(2.40) 1.42 1.42(1.00)
20 Newsgroups | Global Pooling CNN | 17.91 2.20(3.30) 13.57 2.60(2.20) 15.21 7.07(2.10) 6.92 2.17(1.40)
SST Binary | Tree LSTM | 7.31 2.10(1.80) 9.42 2.80(2.70) 4.49 3.72(1.50) 8.63 1.92(0.70)
""",
    },
    "table3": {
        "number": 3, "metric": "error", "lines": (421, 433),
        "caption": "Error (%) computed for different approaches. In this table, FL-3 denotes Focal Loss (fixed γ "
                   "3), FLS-532 denotes Focal Loss (scheduled γ 5,3,2) and FLA-53 denotes Focal Loss (sample-wise "
                   "γ 5,3) i.e. focal loss with sample-wise γ with γ = 5 for p_iy ∈ [0,0.19] and γ = 3 for "
                   "p_iy ∈ (0.19,1].",
        "columns": _single([CE, BRIER, MMCE, FL3, FLS532, FLA53], "error"),
        "rows": """
CIFAR-100 | ResNet 50 | 23.30 23.39 23.20 22.75 23.24 23.22
CIFAR-100 | ResNet 110 | 22.73 25.10 23.07 22.92 22.96 22.51
CIFAR-100 | Wide ResNet 26-10 | 20.70 20.59 20.73 19.69 20.13 20.11
CIFAR-100 | DenseNet 121 | 24.52 23.75 24.00 23.25 23.72 22.67
CIFAR-10 | ResNet 50 | 4.95 5.00 4.99 5.25 5.63 4.98
CIFAR-10 | ResNet 110 | 4.89 5.48 5.40 5.08 5.71 5.42
CIFAR-10 | Wide ResNet 26-10 | 3.86 4.08 3.91 4.13 4.46 4.01
CIFAR-10 | DenseNet 121 | 5.00 5.11 5.41 5.33 5.65 5.46
20 Newsgroups | Global Pooling CNN | 26.68 27.06 27.23 29.26 28.16 27.98
SST Binary | Tree LSTM | 12.85 12.85 11.86 12.19 13.07 12.80
""",
    },
    "table4": {
        "number": 4, "metric": "ece", "lines": (436, 447),
        "caption": "ECE (%) computed for different approaches both pre and post temperature scaling "
                   "(cross-validating T on ECE). Optimal temperature for each method is indicated in brackets.",
        "columns": pre_post_columns([("fl3", "Focal Loss (fixed γ 3)"), ("fls532", "Focal Loss (scheduled γ 5,3,2)"),
                                     ("flsd53", "Focal Loss (sample-wise γ 5,3)")], "ece"),
        "rows": """
CIFAR-100 | ResNet 50 | 5.13 1.97(1.10) 8.47 2.13(1.30) 4.50 2.00(1.10)
CIFAR-100 | ResNet 110 | 8.64 3.95(1.20) 11.20 3.43(1.30) 8.56 4.12(1.20)
CIFAR-100 | Wide ResNet 26-10 | 2.13 2.13(1.00) 4.98 1.94(1.20) 3.03 1.64(1.10)
CIFAR-100 | DenseNet 121 | 4.15 1.25(1.10) 7.63 1.96(1.20) 3.73 1.31(1.10)
CIFAR-10 | ResNet 50 | 1.48 1.42(1.10) 2.97 1.53(1.20) 1.55 0.95(1.10)
CIFAR-10 | ResNet 110 | 1.55 1.02(1.10) 3.33 1.36(1.30) 1.87 1.07(1.10)
CIFAR-10 | Wide ResNet 26-10 | 1.69 0.97(0.90) 1.82 1.45(1.10) 1.56 0.84(0.90)
CIFAR-10 | DenseNet 121 | 1.32 1.26(0.90) 2.22 1.34(1.10) 1.22 1.22(1.00)
20 Newsgroups | Global Pooling CNN | 8.67 3.51(1.50) 12.13 2.47(1.80) 6.92 2.19(1.50)
SST Binary | Tree LSTM | 16.05 1.78(0.50) 3.91 2.64(0.90) 9.19 1.83(0.70)
""",
    },
    "table5": {
        "number": 5, "metric": "adaece", "lines": (450, 460),
        "caption": "Adaptive ECE (%) computed for different approaches both pre and post temperature scaling "
                   "(cross-validating T on Adaptive ECE). Optimal temperature for each method is indicated in "
                   "brackets.",
        "columns": pre_post_columns([("fl3", "Focal Loss (fixed γ 3)"), ("fls532", "Focal Loss (scheduled γ 5,3,2)"),
                                     ("flsd53", "Focal Loss (sample-wise γ 5,3)")], "adaece"),
        "notes": "Line 455 of the text holds the CIFAR-10 ResNet 110 and Wide ResNet 26-10 rows interleaved.",
        "rows": """
CIFAR-100 | ResNet 50 | 5.08 2.35(1.20) 8.41 2.25(1.30) 4.39 2.33(1.10)
CIFAR-100 | ResNet 110 | 8.64 4.14(1.20) 11.18 3.68(1.30) 8.55 3.96(1.20)
CIFAR-100 | Wide ResNet 26-10 | 2.08 2.08(1.00) 5.00 2.11(1.20) 2.75 1.63(1.10)
CIFAR-100 | DenseNet 121 | 4.15 1.23(1.10) 7.61 2.04(1.20) 3.55 1.24(1.10)
CIFAR-10 | ResNet 50 | 1.95 1.83(1.10) 2.95 2.18(1.20) 1.56 1.26(1.10)
CIFAR-10 | ResNet 110 | 1.62 1.44(1.10) 3.32 1.91(1.40) 2.07 1.67(1.10)
CIFAR-10 | Wide ResNet 26-10 | 1.84 1.54(0.90) 2.04 1.90(1.10) 1.52 1.38(0.90)
CIFAR-10 | DenseNet 121 | 1.22 1.48(0.90) 2.19 1.59(1.20) 1.42 1.42(1.00)
20 Newsgroups | Global Pooling CNN | 8.65 3.78(1.50) 12.13 2.18(1.90) 6.92 2.17(1.40)
SST Binary | Tree LSTM | 15.64 2.17(0.50) 2.94 2.50(0.90) 8.63 1.92(0.70)
""",
    },
    "table6": {
        "number": 6, "metric": "s99", "lines": (476, 480),
        "caption": "Percentage of test samples predicted with confidence higher than 99% and the corresponding "
                   "accuracy for Cross Entropy, MMCE and Focal loss computed both pre and post temperature scaling "
                   "(represented in the table as pre T and post T respectively).",
        "columns": _S99,
        "notes": "s99_fraction = |S99| as % of the test set; s99_accuracy = accuracy (%) on S99. The table does "
                 "not say which focal-loss variant it shows (method 'focal'); the text's optimal temperature 1.1 "
                 "fits both FL-3 and FLA-53 (Tables 1, 4). Temperatures are not printed here; Section 5 says "
                 "2.5-2.8 for cross-entropy and MMCE and 1.1 for focal loss (Table 1 gives them).",
        "rows": """
CIFAR-10 | ResNet 110 | 97.11 96.33 11.5 97.39 97.65 96.72 10.62 99.83 61.41 99.51 31.10 99.68
CIFAR-10 | ResNet 50 | 95.93 96.72 7.33 99.73 92.33 98.24 4.21 100 46.31 99.57 14.27 99.93
""",
    },
    "table7": {
        "number": 7, "metric": "ece", "lines": (738, 749),
        "caption": "ECE (%) computed for different focal loss approaches both pre and post temperature scaling "
                   "(cross-validating T on ECE). Optimal temperature for each method is indicated in brackets.",
        "columns": pre_post_columns(FOCAL_ALL, "ece"),
        "rows": """
CIFAR-100 | ResNet 50 | 12.86 2.29(1.50) 8.61 2.24(1.30) 5.13 1.97(1.10) 11.63 2.09(1.40) 8.47 2.13(1.30) 9.09 1.61(1.30) 4.50 2.00(1.10)
CIFAR-100 | ResNet 110 | 15.08 4.55(1.50) 11.56 3.72(1.30) 8.64 3.95(1.20) 14.99 4.56(1.50) 11.20 3.43(1.30) 11.74 3.64(1.30) 8.56 4.12(1.20)
CIFAR-100 | Wide ResNet 26-10 | 8.93 2.53(1.40) 4.64 2.93(1.20) 2.13 2.13(1.00) 9.36 2.48(1.40) 4.98 1.94(1.20) 4.98 2.55(1.20) 3.03 1.64(1.10)
CIFAR-100 | DenseNet 121 | 14.24 2.80(1.50) 7.90 2.33(1.20) 4.15 1.25(1.10) 13.05 2.08(1.50) 7.63 1.96(1.20) 8.14 2.35(1.30) 3.73 1.31(1.10)
CIFAR-10 | ResNet 50 | 3.42 1.08(1.60) 2.36 0.91(1.20) 1.48 1.42(1.10) 4.06 1.53(1.60) 2.97 1.53(1.20) 2.52 0.88(1.30) 1.55 0.95(1.10)
CIFAR-10 | ResNet 110 | 3.46 1.20(1.60) 2.70 0.89(1.30) 1.55 1.02(1.10) 4.92 1.50(1.70) 3.33 1.36(1.30) 2.82 0.97(1.30) 1.87 1.07(1.10)
CIFAR-10 | Wide ResNet 26-10 | 2.69 1.46(1.30) 1.42 1.03(1.10) 1.69 0.97(0.90) 2.81 0.96(1.40) 1.82 1.45(1.10) 1.31 0.87(1.10) 1.56 0.84(0.90)
CIFAR-10 | DenseNet 121 | 3.44 1.63(1.40) 1.93 1.04(1.10) 1.32 1.26(0.90) 4.12 1.65(1.50) 2.22 1.34(1.10) 2.45 1.31(1.20) 1.22 1.22(1.00)
20 Newsgroups | Global Pooling CNN | 15.06 2.14(2.60) 12.10 3.22(1.60) 8.67 3.51(1.50) 13.55 4.32(1.70) 12.13 2.47(1.80) 12.20 2.39(2.00) 6.92 2.19(1.50)
SST Binary | Tree LSTM | 6.78 3.29(1.60) 3.05 3.05(1.00) 16.05 1.78(0.50) 4.66 3.36(1.40) 3.91 2.64(0.90) 4.47 2.77(0.90) 9.19 1.83(0.70)
""",
    },
    "table8": {
        "number": 8, "metric": "adaece", "lines": (752, 763),
        "caption": "AdaECE (%) computed for different focal loss approaches both pre and post temperature "
                   "scaling (cross-validating T on AdaECE). Optimal temperature for each method is indicated in "
                   "brackets.",
        "columns": pre_post_columns(FOCAL_ALL, "adaece"),
        "rows": """
CIFAR-100 | ResNet 50 | 12.86 2.54(1.50) 8.55 2.44(1.30) 5.08 2.35(1.20) 11.58 2.01(1.40) 8.41 2.25(1.30) 9.08 1.94(1.30) 4.39 2.33(1.10)
CIFAR-100 | ResNet 110 | 15.08 4.30(1.60) 11.57 4.38(1.40) 8.64 4.14(1.20) 14.98 3.92(1.60) 11.18 3.68(1.30) 11.74 4.21(1.30) 8.55 3.96(1.20)
CIFAR-100 | Wide ResNet 26-10 | 8.93 2.74(1.40) 4.65 2.96(1.20) 2.08 2.08(1.00) 9.20 2.52(1.40) 5.00 2.11(1.20) 5.00 2.58(1.20) 2.75 1.63(1.10)
CIFAR-100 | DenseNet 121 | 14.24 2.71(1.50) 7.90 2.36(1.20) 4.15 1.23(1.10) 13.01 2.18(1.50) 7.61 2.04(1.20) 8.04 2.10(1.30) 3.55 1.24(1.10)
CIFAR-10 | ResNet 50 | 3.42 1.51(1.60) 2.37 1.69(1.20) 1.95 1.83(1.10) 4.06 2.36(1.50) 2.95 2.18(1.20) 2.50 1.23(1.30) 1.56 1.26(1.10)
CIFAR-10 | ResNet 110 | 3.42 1.57(1.70) 2.69 1.29(1.30) 1.62 1.44(1.10) 4.91 2.62(1.60) 3.32 1.91(1.40) 2.78 1.58(1.30) 2.07 1.67(1.10)
CIFAR-10 | Wide ResNet 26-10 | 2.70 1.52(1.40) 1.64 1.47(1.10) 1.84 1.54(0.90) 2.75 1.87(1.30) 2.04 1.90(1.10) 1.68 1.49(1.10) 1.52 1.38(0.90)
CIFAR-10 | DenseNet 121 | 3.44 1.85(1.40) 1.80 1.39(1.10) 1.22 1.48(0.90) 4.11 2.20(1.50) 2.19 1.59(1.20) 2.44 1.60(1.20) 1.42 1.42(1.00)
20 Newsgroups | Global Pooling CNN | 15.06 2.55(2.70) 12.10 3.33(1.60) 8.65 3.78(1.50) 13.55 3.55(1.90) 12.13 2.18(1.90) 12.19 3.14(1.70) 6.92 2.17(1.40)
SST Binary | Tree LSTM | 6.01 2.92(1.70) 2.67 2.67(1.00) 15.64 2.17(0.50) 3.94 1.90(1.30) 2.94 2.50(0.90) 3.54 3.54(1.00) 8.63 1.92(0.70)
""",
    },
    "table9": {
        "number": 9, "metric": "error", "lines": (766, 776),
        "caption": "Error (%) computed for different focal loss approaches.",
        "columns": _single(FOCAL_ALL, "error"),
        "rows": """
CIFAR-100 | ResNet 50 | 22.80 23.15 22.75 23.49 23.24 23.55 23.22
CIFAR-100 | ResNet 110 | 22.36 22.52 22.92 22.81 22.96 22.93 22.51
CIFAR-100 | Wide ResNet 26-10 | 19.61 20.01 19.69 20.13 20.13 19.71 20.11
CIFAR-100 | DenseNet 121 | 23.82 23.19 23.25 23.69 23.72 22.41 22.67
CIFAR-10 | ResNet 50 | 4.93 4.98 5.25 5.66 5.63 5.24 4.98
CIFAR-10 | ResNet 110 | 4.78 5.06 5.08 6.13 5.71 5.19 5.42
CIFAR-10 | Wide ResNet 26-10 | 4.27 4.27 4.13 4.11 4.46 4.14 4.01
CIFAR-10 | DenseNet 121 | 5.09 4.84 5.33 5.46 5.65 5.46 5.46
20 Newsgroups | Global Pooling CNN | 26.13 28.23 29.26 29.16 28.16 27.26 27.98
SST Binary | Tree LSTM | 12.63 12.30 12.19 12.36 13.07 12.30 12.80
""",
    },
    "table10": {
        "number": 10, "metric": "nll", "lines": (778, 788),
        "caption": "NLL (%) computed for different approaches pre temperature scaling.",
        "columns": _single(ALL10, "nll"),
        "rows": """
CIFAR-100 | ResNet 50 | 153.67 99.63 125.28 105.61 92.82 87.52 100.09 92.66 94.10 88.03
CIFAR-100 | ResNet 110 | 179.21 110.72 180.54 114.18 96.74 90.90 112.46 95.85 97.97 89.92
CIFAR-100 | Wide ResNet 26-10 | 140.10 84.62 119.58 87.56 77.80 74.66 88.61 78.52 78.86 76.92
CIFAR-100 | DenseNet 121 | 205.61 98.31 166.65 115.50 93.11 87.13 107.91 93.12 91.14 85.47
CIFAR-10 | ResNet 50 | 41.21 18.67 44.83 22.67 18.60 18.43 25.32 20.50 18.69 17.55
CIFAR-10 | ResNet 110 | 47.51 20.44 55.71 22.54 19.19 17.80 32.77 22.48 19.39 18.54
CIFAR-10 | Wide ResNet 26-10 | 26.75 15.85 28.47 17.66 14.96 15.20 18.50 15.57 14.78 14.55
CIFAR-10 | DenseNet 121 | 42.93 19.11 52.14 22.50 17.56 18.02 27.41 19.50 20.14 18.39
20 Newsgroups | Global Pooling CNN | 176.57 130.41 158.70 140.40 115.97 109.62 128.75 123.72 124.03 109.17
SST Binary | Tree LSTM | 50.20 54.96 37.28 53.90 47.72 50.29 50.25 53.13 45.08 49.23
""",
    },
    "table11": {
        "number": 11, "metric": "nll", "lines": (795, 806),
        "caption": "NLL (%) computed for different approaches post temperature scaling (cross validated on ECE).",
        "columns": _single(ALL10, "nll", scaled=True),
        "notes": "Temperatures are those of Tables 1 and 7 (ECE-optimal); not reprinted.",
        "rows": """
CIFAR-100 | ResNet 50 | 106.83 99.57 101.92 94.58 91.80 87.37 92.77 91.58 92.83 88.27
CIFAR-100 | ResNet 110 | 104.63 111.81 106.73 94.65 91.24 89.92 93.73 91.30 92.29 88.93
CIFAR-100 | Wide ResNet 26-10 | 97.10 85.77 95.92 83.68 80.44 74.66 84.11 80.01 80.40 78.14
CIFAR-100 | DenseNet 121 | 119.23 98.74 113.24 100.81 91.35 87.55 98.16 91.55 90.57 86.06
CIFAR-10 | ResNet 50 | 20.38 18.36 21.58 17.56 17.67 18.34 19.93 19.25 17.28 17.37
CIFAR-10 | ResNet 110 | 21.52 19.60 24.61 17.32 17.53 17.62 23.79 20.21 17.78 18.24
CIFAR-10 | Wide ResNet 26-10 | 15.33 15.85 16.16 15.48 14.85 15.06 15.81 15.38 14.69 14.23
CIFAR-10 | DenseNet 121 | 21.77 19.11 24.88 18.71 17.21 18.10 21.65 19.04 19.27 18.39
20 Newsgroups | Global Pooling CNN | 87.95 93.11 99.74 87.24 93.60 94.69 97.89 93.66 91.73 93.98
SST Binary | Tree LSTM | 41.05 38.27 36.37 45.67 47.72 45.96 45.82 54.52 45.36 49.69
""",
    },
    "table12": {
        "number": 12, "metric": "mce", "lines": (808, 818),
        "caption": "MCE (%) computed for different approaches pre temperature scaling.",
        "columns": _single(ALL10, "mce"),
        "rows": """
CIFAR-100 | ResNet 50 | 44.34 36.75 39.53 33.22 21.03 13.02 26.76 23.56 22.40 16.12
CIFAR-100 | ResNet 110 | 55.92 24.85 50.69 40.49 32.57 26.00 37.24 29.56 34.73 22.57
CIFAR-100 | Wide ResNet 26-10 | 49.36 14.68 40.13 27.00 15.14 9.96 27.81 17.59 13.64 10.17
CIFAR-100 | DenseNet 121 | 56.28 15.47 49.97 35.45 21.70 11.61 38.68 18.91 21.34 9.68
CIFAR-10 | ResNet 50 | 38.65 31.54 60.06 31.75 25.00 21.83 30.54 23.57 25.45 14.89
CIFAR-10 | ResNet 110 | 44.25 25.18 67.52 73.35 25.92 25.15 34.18 30.38 30.80 18.95
CIFAR-10 | Wide ResNet 26-10 | 48.17 77.15 36.82 29.17 30.17 23.86 37.57 30.65 18.51 74.07
CIFAR-10 | DenseNet 121 | 45.19 19.39 43.92 38.03 29.59 77.08 33.50 16.47 17.85 13.36
20 Newsgroups | Global Pooling CNN | 36.91 31.35 34.72 34.28 24.10 18.85 26.02 25.02 24.29 17.44
SST Binary | Tree LSTM | 71.08 92.62 68.43 95.48 86.21 22.32 76.28 86.93 80.85 73.70
""",
    },
    "table13": {
        "number": 13, "metric": "mce", "lines": (820, 831),
        "caption": "MCE (%) computed for different approaches post temperature scaling (cross validated on ECE).",
        "columns": _single(ALL10, "mce", scaled=True),
        "notes": "Temperatures are those of Tables 1 and 7 (ECE-optimal); not reprinted.",
        "rows": """
CIFAR-100 | ResNet 50 | 12.75 21.61 11.99 8.92 8.86 6.76 7.46 6.76 5.24 27.18
CIFAR-100 | ResNet 110 | 22.65 13.56 19.23 20.13 12.00 13.06 18.28 13.72 15.89 10.94
CIFAR-100 | Wide ResNet 26-10 | 14.18 13.42 16.50 10.28 18.32 9.96 13.18 11.01 12.50 9.73
CIFAR-100 | DenseNet 121 | 21.63 8.55 13.02 10.49 11.63 6.17 6.21 6.48 9.41 5.68
CIFAR-10 | ResNet 50 | 20.60 22.46 23.60 25.86 28.17 15.76 22.05 23.85 24.76 26.37
CIFAR-10 | ResNet 110 | 29.98 22.73 31.87 29.74 23.82 37.61 26.25 25.94 11.59 17.35
CIFAR-10 | Wide ResNet 26-10 | 26.63 77.15 32.33 74.58 29.58 25.64 28.63 20.23 19.68 36.56
CIFAR-10 | DenseNet 121 | 32.52 19.39 27.03 19.68 22.71 76.27 21.05 32.76 35.06 13.36
20 Newsgroups | Global Pooling CNN | 6.10 13.04 15.12 7.79 11.88 22.22 16.86 11.85 8.37 12.65
SST Binary | Tree LSTM | 88.48 91.86 32.92 87.77 86.21 74.52 54.27 88.85 82.42 76.71
""",
    },
}
