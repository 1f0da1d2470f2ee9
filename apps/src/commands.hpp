#pragma once

namespace swarmfit::app {

int integrate_command(int argc, char** argv);
int bench_command(int argc, char** argv);
int predict_command(int argc, char** argv);
int data_command(int argc, char** argv);

}  // namespace swarmfit::app
