"""Reported numbers of Ghosh, Schaaf & Gormley (2022), AdaFocal, Tables 1-10, typed as printed.

Source: ``adafocal-ghosh-2022.txt``, the text of the ICLR 2022 OpenReview submission
"AdaFocal: Calibration-aware Adaptive Focal Loss" (the paper appeared at NeurIPS 2022; its
tables differ). ``lines`` give the 1-based line range of each table in that file (first
data row to the end of the caption). Values are percent except where ``units`` says
otherwise. "Post T" cells are printed ``value(T)``; the AdaFocal cells of Table 1 are means
over 5 runs (caption), so their temperatures are not on the 0.1 grid (1.08, 0.96, ...).

Baselines: footnote 3 says the cross-entropy, Brier, MMCE and FLSD-53 numbers are
"borrowed" from Mukhoti et al. (2020) - the NeurIPS 2020 version, whose LS-0.05 and
Tiny-ImageNet rows are not in our (ICLR 2020) Mukhoti text; what can be compared is compared
in ``tests/test_paper_tables_adafocal.py`` and every difference found is a cell note here.

Extraction damage, stored as printed with our reading beside it (``cells``): Table 1 lost
decimal points ("08", "13", "272", "1548") or turned them into colons ("13:01", "17:92");
Table 2 has "50" and "-23.39-". Tables 1 and 10 have two rows merged on one line, their
numbers interleaved (typed here as two rows). Table 9 is printed with the evaluation
metrics as rows and the training bins as columns; it is stored transposed (one row per
training setting, ``setting`` ``bins=N``), with its FLSD-53 column as ``table9_flsd53``
because the format has one method per column. Table 10's rows carry the out-of-distribution
data set in ``setting`` (``ood=SVHN``).
"""
from __future__ import annotations

from . import pre_post_columns

PAPER = {
    "key": "ghosh2022",
    "citation": "ghosh2022adafocal",
    "title": "AdaFocal: Calibration-aware Adaptive Focal Loss",
    "version": "ICLR 2022 OpenReview submission (published at NeurIPS 2022 with different tables)",
    "source_file": "adafocal-ghosh-2022.txt",
    # main comparisons; Table 9 (bins ablation, one network) is left out on purpose.
    # debiased_ece: debiased ECE of Kumar et al. (2019), 15 bins; debiased_ece_30: the same
    # with 30 bins; sweep_ece: ECE_sweep of Roelofs et al. (2022), equal-width bins;
    # sweep_ece_mass: ECE_sweep with equal-mass bins; auroc: OOD-detection AUROC (%).
    "metric_tables": {"ece": ("table1",), "error": ("table2",), "adaece": ("table3",),
                      "classwise_ece": ("table4",), "debiased_ece": ("table5",), "debiased_ece_30": ("table6",),
                      "sweep_ece": ("table7",), "sweep_ece_mass": ("table8",), "auroc": ("table10",)},
    "method_aliases": {},
    "closest_model": {"image": "ResNet-50", "text": "Global-pool CNN"},
    "dataset_keys": {},
    "model_keys": {},
}

CE, BRIER, MMCE = ("cross_entropy", "Cross Entropy"), ("brier", "Brier Loss"), ("mmce", "MMCE")
LS, FLSD, ADA = ("ls005", "LS-0.05"), ("flsd53", "FLSD-53"), ("adafocal", "AdaFocal")
FL3 = ("fl3", "FL-3")
SIX = [CE, BRIER, MMCE, LS, FLSD, ADA]
THREE = [CE, FLSD, ADA]

_BORROWED = ("Footnote 3: the baseline numbers are borrowed from Mukhoti et al. (2020), NeurIPS version; "
             "LS-0.05, Tiny-ImageNet and ImageNet rows are not in our (ICLR 2020) Mukhoti text and cannot be "
             "checked against it.")
_IMAGENET_MISSING = "not reported (printed '-'): no Brier, MMCE or LS-0.05 model was trained on ImageNet"
_T_REUSED = ("The baselines' temperatures are those of Table 1 (ECE-optimal T), not AdaECE-optimal T as in "
             "Mukhoti et al.'s ICLR AdaECE table, so post-T baseline cells agree with Mukhoti Table 2 only where "
             "both temperatures agree.")
_DEBIAS_T = ("Optimal T chosen on validation ECE (caption); these temperatures are shared by Tables 5-8 and "
             "differ from Table 1's for some cells (a separate evaluation).")


def _missing(rows, cols, note):
    return [{"row": r, "column": c, "note": note} for r in rows for c in cols]


def _single(methods, metric, scaled=False):
    return [(m, lab, metric, scaled) for m, lab in methods]


TABLES = {
    "table1": {
        "number": 1, "metric": "ece", "lines": (432, 444),
        "caption": "Test set ECE(%) for different methods (pre and post temperature scaling). Underlined values "
                   "mark the lowest error among Pre-T results and bold marks the overall lowest in the row. "
                   "Optimal temperatures are given in brackets. For AdaFocal, the values are averaged over 5 runs.",
        "columns": pre_post_columns(SIX, "ece"),
        "notes": "Line 433 holds the CIFAR-10 ResNet-110 and Wide-ResNet-26-10 rows interleaved. Several cells "
                 "lost their decimal point in extraction (see the cell notes). AdaFocal values are means over 5 "
                 "runs, the other columns single runs. " + _BORROWED,
        "rows": """
CIFAR-10 | ResNet-50 | 4.35 1.35(2.5) 1.82 1.08(1.1) 4.56 1.19(2.6) 2.96 1.67(0.9) 1.55 0.95(1.1) 0.8 0.65(1.08)
CIFAR-10 | ResNet-110 | 4.41 1.09(2.8) 2.56 1.25(1.2) 5.08 1.42(2.8) 2.09 2.09(1.0) 1.87 1.07(1.1) 0.8 0.65(1.06)
CIFAR-10 | Wide-ResNet-26-10 | 3.23 0.92(2.2) 1.25 1.25(1.0) 3.29 0.86(2.2) 4.26 1.84(0.8) 1.56 0.84(0.9) 0.7 0.7(1.0)
CIFAR-10 | DenseNet-121 | 4.52 1.31(2.4) 1.53 1.53(1.0) 5.1 1.61(2.5) 1.88 1.82(0.9) 1.22 1.22(1.0) 0.76 0.66(1.02)
CIFAR-100 | ResNet-50 | 17.52 3.42(2.1) 6.52 3.64(1.1) 15.32 2.38(1.8) 7.81 4.01(1.1) 4.5 2.0(1.1) 1.3 1.3(1.0)
CIFAR-100 | ResNet-110 | 19.05 4.43(2.3) 7.88 4.65(1.2) 19.14 3.86(2.3) 11.02 5.89(1.1) 8.56 4.12(1.2) 1.3 1.3(1.0)
CIFAR-100 | Wide-ResNet-26-10 | 15.33 2.88(2.2) 4.31 2.7(1.1) 13.17 4.37(1.9) 4.84 4.84(1) 3.03 1.64(1.1) 1.92 1.92(1.0)
CIFAR-100 | DenseNet-121 | 20.98 4.27(2.3) 5.17 2.29(1.1) 19.13 3.06(2.1) 12.89 7.52(1.2) 3.73 1.31(1.1) 1.74 1.74(1.0)
Tiny-ImageNet | Resnet-50 | 15.32 5.48(1.4) 4.44 4.13(0.9) 13.01 5.55(1.3) 15.23 6.51(0.7) 1.76 1.76(1) 2.41 2.25(0.96)
ImageNet | ResNet-50 | 2.81 1.58(0.9) - - - - - - 16.77 2.52(0.7) 3.68 1.10(0.9)
20 Newsgroups | Global-pool CNN | 17.92 2.39(3.4) 13.58 3.22(2.3) 15.48 6.78(2.2) 4.79 2.54(1.1) 6.92 2.19(1.5) 2.72 2.67(1.12)
""",
        "cells": [
            {"row": ("CIFAR-10", "ResNet-50"), "column": 10, "printed": "08",
             "note": "printed '08' (decimal point lost in extraction); our reading 0.8 assumes only the point was "
                     "lost, as in the other damaged cells of this table ('13', '272', '1548'); no other number of "
                     "the paper pins it down (Table 9's single-run 15-bin AdaFocal ECE for this network is 0.51; "
                     "this cell is a 5-run mean), Sec. 5's count of 9 best pre-T rows of 11 only needs it below "
                     "1.55"},
            {"row": ("CIFAR-100", "ResNet-50"), "column": 10, "printed": "13",
             "note": "printed '13' (decimal point lost in extraction); our reading 1.3 is confirmed by the post-T "
                     "cell 1.3(1.0): at T = 1.0 post-T equals pre-T"},
            {"row": ("Tiny-ImageNet", "Resnet-50"), "column": 4, "printed": "13:01",
             "note": "printed '13:01' (decimal point extracted as a colon); read 13.01, the value Tao et al. (2023) "
                     "Table 1 prints for this cell"},
            {"row": ("20 Newsgroups", "Global-pool CNN"), "column": 0, "printed": "17:92",
             "note": "printed '17:92' (decimal point extracted as a colon); read 17.92 = Mukhoti et al. Table 1 "
                     "(cross entropy, 20 Newsgroups)"},
            {"row": ("20 Newsgroups", "Global-pool CNN"), "column": 4, "printed": "1548",
             "note": "printed '1548' (decimal point lost in extraction); read 15.48 = Mukhoti et al. Table 1 "
                     "(MMCE, 20 Newsgroups)"},
            {"row": ("20 Newsgroups", "Global-pool CNN"), "column": 10, "printed": "272",
             "note": "printed '272' (decimal point lost in extraction); read 2.72: the only reading near the "
                     "post-T value 2.67 at T = 1.12, and Sec. 5's count 'AdaFocal outperforms the baseline methods "
                     "[pre-T] in 9 out of 11 cases' holds with 2.72, not with 27.2"},
        ] + _missing([("ImageNet", "ResNet-50")], range(2, 8), _IMAGENET_MISSING),
    },
    "table2": {
        "number": 2, "metric": "error", "lines": (446, 457),
        "caption": "Test set error (%). The model with the lowest error is marked in bold.",
        "columns": _single(SIX, "error"),
        "notes": "The dataset cell of the CIFAR-100 ResNet-110 row is extraction noise ('「TRAD 1 ∏∏'); the row "
                 "belongs to the CIFAR-100 block. Header 'Brier LoSS' as extracted. " + _BORROWED,
        "rows": """
CIFAR-10 | ResNet-50 | 4.95 5.0 4.99 5.29 4.98 5.30
CIFAR-10 | ResNet-110 | 4.89 5.48 5.4 5.52 5.42 5.27
CIFAR-10 | Wide-ResNet-26-10 | 3.86 4.08 3.91 4.2 4.01 4.5
CIFAR-10 | DenseNet-121 | 5.0 5.11 5.41 5.09 5.46 5.2
CIFAR-100 | ResNet-50 | 23.3 23.39 23.2 23.43 23.22 22.60
CIFAR-100 | ResNet-110 | 22.73 25.1 23.07 23.43 22.51 22.79
CIFAR-100 | Wide-ResNet-26-10 | 20.7 20.59 20.73 21.19 20.11 20.07
CIFAR-100 | DenseNet-121 | 24.52 23.75 24.0 24.05 22.67 22.22
Tiny-ImageNet | Resnet-50 | 49.81 53.2 51.31 47.12 49.06 48.26
ImageNet | Resnet-50 | 27.08 - - - 28.53 27.22
20 Newsgroups | Global-pool CNN | 26.68 27.06 27.23 26.03 27.98 28.53
""",
        "cells": [
            {"row": ("CIFAR-10", "ResNet-50"), "column": 1, "printed": "50",
             "note": "printed '50' (decimal point lost in extraction); read 5.0: Mukhoti et al. Table 3 prints "
                     "5.00 (Brier, CIFAR-10 ResNet 50) and Tao et al. Table 2 prints 5.0"},
            {"row": ("CIFAR-100", "ResNet-50"), "column": 1, "printed": "-23.39-",
             "note": "printed '-23.39-' (layout marks around the number); read 23.39 = Mukhoti et al. Table 3 "
                     "(Brier, CIFAR-100 ResNet 50)"},
        ] + _missing([("ImageNet", "Resnet-50")], range(1, 4), _IMAGENET_MISSING),
    },
    "table3": {
        "number": 3, "metric": "adaece", "lines": (712, 724),
        "caption": "AdaECE(%). Underline marks the lowest error among pre-temperature scaling values. Bold marks "
                   "the overall lowest in the row.",
        "columns": pre_post_columns(SIX, "adaece"),
        "notes": _T_REUSED + " The CIFAR-100 ResNet-50 baseline cells repeat Table 1's ECE row (see the row "
                             "note). " + _BORROWED,
        "rows": """
CIFAR-10 | ResNet-50 | 4.33 2.14(2.5) 1.74 1.23(1.1) 4.55 2.16(2.6) 3.89 2.92(0.9) 1.56 1.26(1.1) 0.56 0.88(0.9)
CIFAR-10 | ResNet-110 | 4.4 1.99(2.8) 2.6 1.7(1.2) 5.06 2.52(2.8) 4.44 4.44(1) 2.07 1.67(1.1) 0.44 0.44(1.0)
CIFAR-10 | Wide-ResNet-26-10 | 3.23 1.69(2.2) 1.7 1.7(1) 3.29 1.6(2.2) 4.27 2.44(0.8) 1.52 1.38(0.9) 0.64 0.42(1.1)
CIFAR-10 | DenseNet-121 | 4.51 2.13(2.4) 2.03 2.03(1) 5.1 2.29(2.5) 4.42 3.33(0.9) 1.42 1.42(1) 0.54 0.54(1.0)
CIFAR-100 | ResNet-50 | 17.52 3.42(2.1) 6.52 3.64(1.1) 15.32 2.38(1.8) 7.81 4.01(1.1) 4.5 2.0(1.1) 1.72 1.72(1.0)
CIFAR-100 | ResNet-110 | 19.05 5.86(2.3) 7.73 4.53(1.2) 19.14 4.85(2.3) 11.12 8.59(1.1) 8.55 3.96(1.2) 1.57 1.57(1.0)
CIFAR-100 | Wide-ResNet-26-10 | 15.33 2.89(2.2) 4.22 2.81(1.1) 13.16 4.25(1.9) 5.1 5.1(1) 2.75 1.63(1.1) 2.22 2.22(1.0)
CIFAR-100 | DenseNet-121 | 20.98 5.09(2.3) 5.04 2.56(1.1) 19.13 3.07(2.1) 12.83 8.92(1.2) 3.55 1.24(1.1) 1.54 1.54(1.0)
Tiny-ImageNet | ResNet-50 | 15.23 5.41(1.4) 4.37 4.07(0.9) 13.0 5.56(1.3) 15.28 6.29(0.7) 1.42 1.42(1) 1.26 1.26(1.0)
ImageNet | ResNet-50 | 2.93 1.5(0.9) - - - - - - 16.77 2.62(0.7) 3.73 0.84(0.9)
20 Newsgroups | Global-pool CNN | 17.91 2.23(3.4) 13.57 3.11(2.3) 15.21 6.47(2.2) 4.39 2.63(1.1) 6.92 2.35(1.5) 2.38 2.38(1.0)
""",
        "cells": _missing([("ImageNet", "ResNet-50")], range(2, 8), _IMAGENET_MISSING) + [
            {"row": ("CIFAR-100", "ResNet-50"), "column": c,
             "note": "this row's baseline cells (Cross Entropy to FLSD-53) repeat Table 1's ECE row exactly "
                     "(17.52 3.42(2.1) ... 4.5 2.0(1.1)); Mukhoti et al. Table 2 prints this network's AdaECE as "
                     "FLSD-53 4.39 pre-T and, at the same temperatures, 3.67(2.10), 2.44(1.80), 2.33(1.10) post-T "
                     "for cross entropy, MMCE, FLSD-53: the ECE row appears to have been copied into the AdaECE "
                     "table (Tao et al. Table 5 repeats it)"} for c in range(10)],
    },
    "table4": {
        "number": 4, "metric": "classwise_ece", "lines": (727, 739),
        "caption": "ClasswiseECE(%). Underline marks the lowest error among pre-temperature scaling values. Bold "
                   "marks the overall lowest in the row.",
        "columns": pre_post_columns(SIX, "classwise_ece"),
        "notes": "Classwise ECE is not in our Mukhoti text (ICLR 2020), so no baseline cell can be checked "
                 "against it. The baselines' temperatures are those of Table 1 (ECE-optimal T).",
        "rows": """
CIFAR-10 | ResNet-50 | 0.91 0.45(2.5) 0.46 0.42(1.1) 0.94 0.52(2.6) 0.71 0.51(0.9) 0.42 0.42(1.1) 0.29 0.32(0.9)
CIFAR-10 | ResNet-110 | 0.91 0.50(2.8) 0.59 0.50(1.2) 1.04 0.55(2.8) 0.66 0.66(1) 0.48 0.44(1.1) 0.33 0.33(1.0)
CIFAR-10 | Wide-ResNet-26-10 | 0.68 0.37(2.2) 0.44 0.44(1) 0.70 0.35(2.2) 0.80 0.45(0.8) 0.41 0.31(0.9) 0.27 0.28(1.1)
CIFAR-10 | DenseNet-121 | 0.92 0.47(2.4) 0.46 0.46(1) 1.04 0.57(2.5) 0.60 0.50(0.9) 0.41 0.41(1) 0.30 0.30(1.0)
CIFAR-100 | ResNet-50 | 0.38 0.22(2.1) 0.22 0.20(1.1) 0.34 0.21(1.8) 0.23 0.21(1.1) 0.20 0.20(1.1) 0.20 0.20(1.0)
CIFAR-100 | ResNet-110 | 0.41 0.21(2.3) 0.24 0.23(1.2) 0.42 0.22(2.3) 0.26 0.22(1.1) 0.24 0.21(1.2) 0.19 0.19(1.0)
CIFAR-100 | Wide-ResNet-26-10 | 0.34 0.20(2.2) 0.19 0.19(1.1) 0.31 0.20(1.9) 0.21 0.21(1) 0.18 0.19(1.1) 0.19 0.19(1.0)
CIFAR-100 | DenseNet-121 | 0.45 0.23(2.3) 0.20 0.21(1.1) 0.42 0.24(2.1) 0.29 0.24(1.2) 0.19 0.20(1.1) 0.20 0.20(1.0)
Tiny-ImageNet | ResNet-50 | 0.22 0.16(1.4) 0.16 0.16(0.9) 0.21 0.16(1.3) 0.21 0.17(0.7) 0.16 0.16(1) 0.16 0.16(1.0)
ImageNet | ResNet-50 | 0.03 0.03(0.9) - - - - - - 0.05 0.04(0.7) 0.03 0.03(0.9)
20 Newsgroups | Global-pool CNN | 1.95 0.83(3.4) 1.56 0.82(2.3) 1.77 1.10(2.2) 0.93 0.91(1.1) 1.40 1.19(1.5) 1.02 1.02(1.0)
""",
        "cells": _missing([("ImageNet", "ResNet-50")], range(2, 8), _IMAGENET_MISSING),
    },
    "table5": {
        "number": 5, "metric": "debiased_ece", "lines": (745, 758),
        "caption": "ECEdebias(%) 15 bins. Underline marks the lowest error among pre-temperature scaling values. "
                   "Bold marks the overall lowest in the row. Optimal temperature is selected based on the lowest "
                   "ECE on the validation set.",
        "columns": pre_post_columns(THREE, "debiased_ece"),
        "notes": "Debiased ECE (Kumar et al., 2019) with 15 bins. " + _DEBIAS_T + " The Tiny-ImageNet AdaFocal "
                 "post-T cell is printed '0.84 (1)' with a space.",
        "rows": """
CIFAR-10 | ResNet-50 | 4.05 1.7(2.5) 1.62 1.62(1) 0.47 0.82(0.9)
CIFAR-10 | ResNet-110 | 4.38 2.2(2.7) 1.82 1.3(1.1) 0.32 0.32(1)
CIFAR-10 | Wide-ResNet-26-10 | 3.52 1.89(2.2) 2.01 1.5(0.9) 0.59 0.25(1.1)
CIFAR-10 | DenseNet-121 | 4.26 2.15(2.3) 1.56 1.93(0.9) 0.42 0.42(1)
CIFAR-100 | ResNet-50 | 17.73 3.86(2.2) 5.52 2.92(1.1) 1.46 1.46(1)
CIFAR-100 | ResNet-110 | 19.44 6.01(2.3) 7.31 3.55(1.2) 1.35 1.35(1)
CIFAR-100 | Wide-ResNet-26-10 | 14.91 3.32(2.1) 2.53 2.53(1) 2.12 2.12(1)
CIFAR-100 | DenseNet-121 | 19.82 3.44(2.3) 2.29 2.12(1.1) 1.27 1.27(1)
Tiny-ImageNet | ResNet-50 | 16.16 5.44(1.5) 2.00 2.00(1) 0.84 0.84(1)
ImageNet | ResNet-50 | 2.89 1.42(0.9) 16.76 2.58(0.7) 3.7 0.61(0.9)
20 Newsgroups | Global-pool CNN | 18.36 5.23(4.1) 8.94 0.94(1.6) 1.84 1.84(1)
""",
    },
    "table6": {
        "number": 6, "metric": "debiased_ece_30", "lines": (761, 774),
        "caption": "ECEdebias (%) 30bins. Underline marks the lowest error among pre-temperature scaling values. "
                   "Bold marks the overall lowest in the row. Optimal temperature is selected based on the lowest "
                   "ECE on the validation set.",
        "columns": pre_post_columns(THREE, "debiased_ece_30"),
        "notes": "Debiased ECE (Kumar et al., 2019) with 30 bins (metric debiased_ece_30). " + _DEBIAS_T,
        "rows": """
CIFAR-10 | ResNet-50 | 4.03 1.73(2.5) 1.57 1.57(1) 0.46 0.93(0.9)
CIFAR-10 | ResNet-110 | 4.38 2.21(2.7) 1.81 1.23(1.1) 0.26 0.26(1)
CIFAR-10 | Wide-ResNet-26-10 | 3.5 1.84(2.2) 1.98 1.5(0.9) 0.66 0.24(1.1)
CIFAR-10 | DenseNet-121 | 4.24 2.16(2.3) 1.6 1.95(0.9) 0.64 0.64(1)
CIFAR-100 | ResNet-50 | 17.71 3.66(2.2) 5.52 2.99(1.1) 1.55 1.55(1)
CIFAR-100 | ResNet-110 | 19.43 6.31(2.3) 7.23 3.86(1.2) 1.17 1.17(1)
CIFAR-100 | Wide-ResNet-26-10 | 14.9 3.4(2.1) 2.46 2.46(1) 2.12 2.12(1)
CIFAR-100 | DenseNet-121 | 19.81 3.49(2.3) 2.18 2.31(1.1) 1.08 1.08(1)
Tiny-ImageNet | ResNet-50 | 16.11 5.5(1.5) 1.81 1.81(1) 0.64 0.64(1)
ImageNet | ResNet-50 | 2.84 1.39(0.9) 16.76 2.55(0.7) 3.67 0.91(0.9)
20 Newsgroups | Global-pool CNN | 18.39 5.51(4.1) 8.98 1.89(1.6) 1.92 1.92(1)
""",
    },
    "table7": {
        "number": 7, "metric": "sweep_ece", "lines": (777, 790),
        "caption": "ECEEW-sweep(%). Underline marks the lowest error among pre-temperature scaling values. Bold "
                   "marks the overall lowest in the row. Optimal temperature is selected based on the lowest ECE "
                   "on the validation set.",
        "columns": pre_post_columns(THREE, "sweep_ece"),
        "notes": "ECE_sweep (Roelofs et al., 2022) with equal-width bins. " + _DEBIAS_T,
        "rows": """
CIFAR-10 | ResNet-50 | 4.05 1.17(2.5) 1.31 1.31(1) 0.48 0.92(0.9)
CIFAR-10 | ResNet-110 | 4.38 1.34(2.7) 1.96 1.05(1.1) 0.5 0.5(1)
CIFAR-10 | Wide-ResNet-26-10 | 3.53 1.14(2.2) 1.22 0.92(0.9) 0.64 0.36(1.1)
CIFAR-10 | DenseNet-121 | 4.26 1.43(2.3) 0.94 1.9(0.9) 0.33 0.33(1)
CIFAR-100 | ResNet-50 | 17.72 2.81(2.2) 5.54 2.17(1.1) 1.7 1.7(1)
CIFAR-100 | ResNet-110 | 19.44 3.74(2.3) 7.36 3.86(1.2) 1.54 1.54(1)
CIFAR-100 | Wide-ResNet-26-10 | 14.99 3.11(2.1) 2.69 2.69(1) 2.02 2.02(1)
CIFAR-100 | DenseNet-121 | 19.82 2.58(2.3) 2.24 2.34(1.1) 1.27 1.27(1)
Tiny-ImageNet | ResNet-50 | 16.19 5.56(1.5) 2.14 2.14(1) 1.37 1.37(1)
ImageNet | ResNet-50 | 2.84 1.62(0.9) 16.77 2.52(0.7) 3.68 1.1(0.9)
20 Newsgroups | Global-pool CNN | 18.39 5.14(4.1) 9.03 1.48(1.6) 2.06 2.06(1)
""",
    },
    "table8": {
        "number": 8, "metric": "sweep_ece_mass", "lines": (795, 808),
        "caption": "ECEEM-sweep(%). Underline marks the lowest error among pre-temperature scaling values. Bold "
                   "marks the overall lowest in the row. Optimal temperature is selected based on the lowest ECE "
                   "on the validation set.",
        "columns": pre_post_columns(THREE, "sweep_ece_mass"),
        "notes": "ECE_sweep (Roelofs et al., 2022) with equal-mass bins (metric sweep_ece_mass). " + _DEBIAS_T,
        "cells": [{"row": ("CIFAR-100", "ResNet-50"), "column": 1,
                   "note": "suspicious: 0.51 is 5-8 times this cell in Tables 5-7 (3.86, 3.66, 2.81 at the same "
                           "T = 2.2), while the other cross-entropy post-T cells of Tables 7 and 8 agree within a "
                           "factor 1.6; possibly a misprint, cannot be checked"}],
        "rows": """
CIFAR-10 | ResNet-50 | 4.05 1.43(2.5) 1.54 1.54(1) 0.04 0.7(0.9)
CIFAR-10 | ResNet-110 | 4.38 1.34(2.7) 1.83 1.32(1.1) 0.4 0.4(1)
CIFAR-10 | Wide-ResNet-26-10 | 3.53 1.41(2.2) 1.64 1.55(0.9) 0.38 0.32(1.1)
CIFAR-10 | DenseNet-121 | 4.27 2.17(2.3) 1.58 1.98(0.9) 0.34 0.34(1)
CIFAR-100 | ResNet-50 | 17.72 0.51(2.2) 5.51 2.36(1.1) 1.89 1.89(1)
CIFAR-100 | ResNet-110 | 19.44 3.71(2.3) 7.34 3.65(1.2) 1.58 1.58(1)
CIFAR-100 | Wide-ResNet-26-10 | 14.92 2.62(2.1) 2.62 2.62(1) 2.25 2.25(1)
CIFAR-100 | DenseNet-121 | 19.82 3.12(2.3) 2.25 2.31(1.1) 1.47 1.47(1)
Tiny-ImageNet | ResNet-50 | 16.19 5.44(1.5) 2.10 2.10(1) 1.6 1.6(1)
ImageNet | ResNet-50 | 2.93 1.63(0.9) 16.77 2.58(0.7) 3.73 0.92(0.9)
20 Newsgroups | Global-pool CNN | 18.38 5.53(4.1) 8.95 2.13(1.6) 2.22 2.22(1)
""",
    },
    "table9": {
        "number": 9, "metric": "ece", "lines": (825, 831),
        "caption": "Effect of number of bins used for AdaFocal.",
        "columns": [(ADA[0], ADA[1], m, False) for m in
                    ("ece", "adaece", "debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")],
        "notes": "Appendix I: CIFAR-10, ResNet-50, 350 epochs, no temperature scaling; the data set and network are "
                 "given by the text, not the table. Printed with the six evaluation metrics as rows (ECE, AdaECE, "
                 "ECE_debias 15 and 30 bins, EW and EM ECE_sweep, all with 15 bins unless named) and the training "
                 "bins of AdaFocal as columns; stored transposed, one row per training setting ('bins=N' = N "
                 "equal-mass validation bins). The printed FLSD-53 column is table9_flsd53. The 15-bin column is "
                 "the AdaFocal model of Tables 3 and 5-8 (same AdaECE, debiased and sweep values); its ECE (0.51) "
                 "differs from Table 1's 5-run mean.",
        "rows": """
CIFAR-10 | ResNet-50 | bins=5 | 0.76 0.63 0.5 0.73 0.66 0.53
CIFAR-10 | ResNet-50 | bins=10 | 0.53 0.53 0.44 0.43 0.43 0.21
CIFAR-10 | ResNet-50 | bins=15 | 0.51 0.56 0.47 0.46 0.48 0.04
CIFAR-10 | ResNet-50 | bins=20 | 0.6 0.4 0.25 0.27 0.48 0.38
CIFAR-10 | ResNet-50 | bins=30 | 0.82 0.84 0.79 0.72 0.8 0.07
CIFAR-10 | ResNet-50 | bins=50 | 1.16 1.1 1.07 1.06 1.08 1.08
""",
    },
    "table9_flsd53": {
        "number": 9, "metric": "ece", "lines": (825, 831),
        "caption": "Effect of number of bins used for AdaFocal. (FLSD-53 column)",
        "columns": [(FLSD[0], FLSD[1], m, False) for m in
                    ("ece", "adaece", "debiased_ece", "debiased_ece_30", "sweep_ece", "sweep_ece_mass")],
        "notes": "The FLSD-53 baseline column of Table 9 (CIFAR-10, ResNet-50, no temperature scaling), stored "
                 "transposed as one row. Its debiased and sweep values equal the FLSD-53 pre-T cells of Tables 5-8; "
                 "its ECE and AdaECE differ from Tables 1 and 3 (see the cell notes).",
        "rows": """
CIFAR-10 | ResNet-50 | 1.35 1.67 1.62 1.57 1.31 1.54
""",
        "cells": [
            {"row": ("CIFAR-10", "ResNet-50"), "column": 0,
             "note": "differs from the FLSD-53 ECE of the same network in Table 1 (1.55, = Mukhoti et al. Table 1); "
                     "1.35 is Mukhoti's cross-entropy post-T ECE of this row, 1.35(2.50)"},
            {"row": ("CIFAR-10", "ResNet-50"), "column": 1,
             "note": "differs from the FLSD-53 AdaECE of the same network in Table 3 (1.56, = Mukhoti et al. "
                     "Table 2)"},
        ],
    },
    "table10": {
        "number": 10, "metric": "auroc", "lines": (838, 842),
        "caption": "AUROC (%) of models trained on CIFAR-10 as the in-distribution data and tested on SVHN and "
                   "CIFAR-10-C as out-of-distribution data.",
        "columns": pre_post_columns([CE, BRIER, MMCE, LS, FL3, FLSD], "auroc") + [(ADA[0], "AdaFocal Pre T",
                                                                                 "auroc", False)],
        "notes": "Out-of-distribution detection with the softmax entropy: dataset = the in-distribution data "
                 "(CIFAR-10), setting = the OOD data set ('ood=SVHN', 'ood=CIFAR-10-C': level-5 Gaussian noise). "
                 "Post-T temperatures are not printed (no optimal T recorded). AdaFocal has a Pre T column only. Line 840 "
                 "holds the CIFAR-10-C ResNet-110 and Wide-ResNet-26-10 rows interleaved. Appendix J: the FL-3 "
                 "ResNet-110 SVHN numbers are the authors' own, not Mukhoti et al.'s (see the cell notes).",
        "rows": """
CIFAR-10 | ResNet-110 | ood=SVHN | 61.71 59.66 94.80 95.13 85.31 85.39 68.68 68.68 90.27 90.39 90.33 90.49 96.09
CIFAR-10 | Wide-ResNet-26-10 | ood=SVHN | 96.82 97.62 94.51 94.51 97.35 97.95 84.63 84.66 90.92 91.30 93.08 93.11 96.63
CIFAR-10 | ResNet-110 | ood=CIFAR-10-C | 77.53 75.16 84.09 83.86 71.96 70.02 72.17 72.18 80.11 79.78 82.06 81.38 84.96
CIFAR-10 | Wide-ResNet-26-10 | ood=CIFAR-10-C | 81.06 80.68 85.03 85.03 82.17 81.72 71.10 71.16 83.33 84.00 80.00 80.76 89.52
""",
        "cells": [
            {"row": ("CIFAR-10", "ResNet-110", "ood=SVHN"), "column": c,
             "note": "Appendix J: the authors could not reproduce Mukhoti et al.'s 96.74 (pre T) and 96.92 (post T) "
                     "for FL-3 and report their own 90.27, 90.39"} for c in (8, 9)
        ] + [
            {"row": ("CIFAR-10", "ResNet-110", "ood=CIFAR-10-C"), "column": 7,
             "note": "LS-0.05 ResNet-110 has T = 1.0 (Table 1) and equal pre/post AUROC on SVHN (68.68), yet here "
                     "post-T 72.18 differs from pre-T 72.17: at T = 1 the two must be equal (entropy ranking is "
                     "unchanged)"},
        ],
    },
}
